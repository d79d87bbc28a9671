import fc from 'fast-check';
import {
  family,
  field,
  identifier,
  imageUrl,
  jsonSchema,
  modelField,
  models,
  outputTokens,
  promptText,
  routing,
  sampling,
  shortText,
  stopField,
  validOutputTokens,
  validSampling,
  validSchema,
  withExtras,
  wrongValue,
} from './values.ts';

/** Bodies of POST /v1/chat/completions and POST /v1/responses, from their real field names. */

const chatPart = fc.oneof(
  fc.record({ type: fc.constant('text'), text: field(promptText) }),
  fc.record({
    type: fc.constant('image_url'),
    image_url: field(fc.record({ url: field(imageUrl), detail: field(fc.constantFrom('auto', 'low', 'high', 'ultra')) }, { requiredKeys: ['url'] })),
  }),
  fc.record({ type: fc.constantFrom('input_audio', 'file', 'refusal', ''), text: shortText }),
);
const chatToolCall = fc.record({
  id: field(identifier),
  type: fc.constant('function'),
  function: field(fc.record({ name: field(identifier), arguments: field(fc.oneof(fc.constant('{}'), shortText)) }, { requiredKeys: ['name'] })),
});
const plainChatMessage = fc.record({ role: fc.constantFrom('user', 'system', 'developer'), content: promptText });
const anyChatMessage = fc.record(
  {
    role: field(fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'function', '')),
    content: fc.oneof(promptText, fc.array(chatPart, { maxLength: 3 }), wrongValue),
    tool_calls: field(fc.array(chatToolCall, { maxLength: 2 })),
    tool_call_id: field(identifier),
    name: shortText,
  },
  { requiredKeys: ['role'] },
);
const chatTool = fc.record({
  type: field(fc.constant('function')),
  function: field(
    fc.record(
      { name: field(identifier), description: field(shortText), parameters: field(jsonSchema), strict: field(fc.boolean()) },
      { requiredKeys: ['name'] },
    ),
  ),
});
const chatResponseFormat = fc.oneof(
  fc.constant({ type: 'json_object' }),
  fc.constant({ type: 'text' }),
  fc.record({
    type: fc.constant('json_schema'),
    json_schema: field(fc.record({ name: field(identifier), schema: field(jsonSchema), strict: fc.boolean() })),
  }),
);

const noisyChatBody = withExtras(
  fc.record(
    {
      model: modelField,
      messages: fc.oneof(
        { weight: 4, arbitrary: fc.array(plainChatMessage, { minLength: 1, maxLength: 3 }) },
        { weight: 3, arbitrary: fc.array(anyChatMessage, { maxLength: 4 }) },
        { weight: 1, arbitrary: wrongValue },
      ),
      stream: field(fc.boolean()),
      stream_options: field(fc.record({ include_usage: field(fc.boolean()) }, { requiredKeys: [] })),
      max_tokens: outputTokens,
      max_completion_tokens: outputTokens,
      tools: field(fc.array(chatTool, { maxLength: 2 })),
      tool_choice: field(
        fc.oneof(
          fc.constantFrom('auto', 'none', 'required'),
          fc.record({ type: fc.constant('function'), function: fc.record({ name: identifier }) }),
        ),
      ),
      parallel_tool_calls: field(fc.boolean()),
      temperature: field(sampling),
      top_p: field(sampling),
      stop: field(stopField),
      reasoning_effort: field(fc.constantFrom('low', 'medium', 'high', 'xhigh', 'minimal', 'max')),
      routing: field(routing),
      response_format: field(chatResponseFormat),
    },
    { requiredKeys: ['model', 'messages'] },
  ),
);

const validChatBody = fc.record(
  {
    model: models,
    messages: fc.array(plainChatMessage, { minLength: 1, maxLength: 3 }),
    stream: fc.boolean(),
    stream_options: fc.record({ include_usage: fc.boolean() }),
    max_tokens: validOutputTokens,
    tools: fc.array(
      fc.record({ type: fc.constant('function'), function: fc.record({ name: identifier, description: shortText, parameters: validSchema }) }),
      { maxLength: 2 },
    ),
    temperature: validSampling,
    top_p: validSampling,
    stop: fc.array(identifier, { maxLength: 2 }),
    reasoning_effort: fc.constantFrom('low', 'medium', 'high', 'xhigh'),
    response_format: fc.constantFrom(
      { type: 'json_object' },
      { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } } } },
    ),
    user: identifier,
  },
  { requiredKeys: ['model', 'messages'] },
);

export const chatBody = family(validChatBody, noisyChatBody);

// --- POST /v1/responses ------------------------------------------------------------------------

const responsesPart = fc.oneof(
  fc.record({ type: fc.constantFrom('input_text', 'output_text', 'text', 'summary_text'), text: field(promptText) }),
  fc.record(
    { type: fc.constant('input_image'), image_url: field(imageUrl), detail: field(fc.constantFrom('auto', 'low', 'high')) },
    { requiredKeys: ['type'] },
  ),
  fc.record({ type: fc.constantFrom('input_image', 'input_file'), file_id: identifier }),
  fc.record({ type: fc.constant('refusal'), refusal: field(shortText) }),
);
const responsesItem = fc.oneof(
  fc.record(
    {
      type: fc.constant('message'),
      role: field(fc.constantFrom('user', 'assistant', 'system', 'developer', 'tool')),
      content: fc.oneof(promptText, fc.array(responsesPart, { maxLength: 3 }), wrongValue),
    },
    { requiredKeys: ['role', 'content'] },
  ),
  fc.record(
    {
      type: fc.constantFrom('function_call', 'custom_tool_call'),
      call_id: field(identifier),
      name: field(identifier),
      arguments: field(shortText),
      input: field(shortText),
      namespace: field(identifier),
    },
    { requiredKeys: ['type'] },
  ),
  fc.record(
    {
      type: fc.constantFrom('function_call_output', 'custom_tool_call_output'),
      call_id: field(identifier),
      output: field(fc.oneof(shortText, fc.array(responsesPart, { maxLength: 2 }), fc.record({ content: shortText, success: fc.boolean() }))),
    },
    { requiredKeys: ['type'] },
  ),
  fc.record({
    type: fc.constantFrom('reasoning', 'compaction', 'web_search_call', 'item_reference', 'brand_new_item'),
    id: identifier,
    encrypted_content: shortText,
  }),
);
const responsesTool = fc.oneof(
  fc.record(
    {
      type: fc.constant('function'),
      name: field(identifier),
      parameters: field(jsonSchema),
      strict: field(fc.boolean()),
      description: field(shortText),
    },
    { requiredKeys: ['type', 'name'] },
  ),
  fc.record(
    {
      type: fc.constant('custom'),
      name: field(identifier),
      format: field(fc.record({ type: fc.constant('grammar'), syntax: shortText, definition: shortText })),
    },
    { requiredKeys: ['type', 'name'] },
  ),
  fc.record({
    type: fc.constant('namespace'),
    name: field(identifier),
    tools: field(fc.array(fc.record({ type: fc.constantFrom('function', 'custom'), name: field(identifier) }), { maxLength: 2 })),
  }),
  fc.record({ type: fc.constantFrom('web_search', 'file_search', 'local_shell', 'mcp') }),
);

const noisyResponsesBody = withExtras(
  fc.record(
    {
      model: modelField,
      input: fc.oneof(
        { weight: 4, arbitrary: promptText },
        { weight: 3, arbitrary: fc.array(responsesItem, { maxLength: 4 }) },
        { weight: 1, arbitrary: wrongValue },
      ),
      instructions: field(promptText),
      tools: field(fc.array(responsesTool, { maxLength: 3 })),
      tool_choice: field(
        fc.oneof(
          fc.constantFrom('auto', 'none', 'required'),
          fc.record({
            type: fc.constantFrom('function', 'custom', 'allowed_tools', 'web_search'),
            name: field(identifier),
            mode: fc.constantFrom('auto', 'required'),
          }),
        ),
      ),
      parallel_tool_calls: field(fc.boolean()),
      max_output_tokens: outputTokens,
      temperature: field(sampling),
      top_p: field(sampling),
      reasoning: field(
        fc.record(
          {
            effort: field(fc.constantFrom('none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max')),
            summary: field(fc.constantFrom('auto', 'concise', 'detailed')),
          },
          { requiredKeys: [] },
        ),
      ),
      text: field(
        fc.record(
          {
            format: field(
              fc.record(
                {
                  type: fc.constantFrom('text', 'json_object', 'json_schema'),
                  name: field(identifier),
                  schema: field(jsonSchema),
                  strict: fc.boolean(),
                },
                { requiredKeys: ['type'] },
              ),
            ),
          },
          { requiredKeys: [] },
        ),
      ),
      store: field(fc.boolean()),
      stream: field(fc.boolean()),
      background: field(fc.boolean(), 1),
      previous_response_id: fc.constantFrom(null, 'resp_1'),
      metadata: field(fc.dictionary(identifier, shortText, { maxKeys: 3 })),
      user: field(shortText),
      include: field(fc.array(fc.constantFrom('reasoning.encrypted_content', 'nope'), { maxLength: 2 })),
      routing: field(routing),
    },
    { requiredKeys: ['model', 'input'] },
  ),
);

const validResponsesBody = fc.record(
  {
    model: models,
    input: fc.oneof(promptText, fc.array(fc.record({ role: fc.constant('user'), content: promptText }), { minLength: 1, maxLength: 2 })),
    instructions: promptText,
    tools: fc.array(fc.record({ type: fc.constant('function'), name: identifier, parameters: validSchema }), { maxLength: 2 }),
    max_output_tokens: validOutputTokens,
    reasoning: fc.record({ effort: fc.constantFrom('low', 'medium', 'high') }),
    text: fc.constant({ format: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } } } }),
    store: fc.boolean(),
    stream: fc.boolean(),
    metadata: fc.dictionary(identifier, shortText, { maxKeys: 2 }),
  },
  { requiredKeys: ['model', 'input'] },
);

export const responsesBody = family(validResponsesBody, noisyResponsesBody);
