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
  validOutputTokens,
  validSampling,
  validSchema,
  withExtras,
  wrongValue,
} from './values.ts';

/** Bodies of POST /v1/messages and /v1/messages/count_tokens (Anthropic), from their real field names. */

const cacheControl = field(fc.constant({ type: 'ephemeral' }));
const anthropicBlock = fc.oneof(
  fc.record({ type: fc.constant('text'), text: field(promptText), cache_control: cacheControl }, { requiredKeys: ['type', 'text'] }),
  fc.record({
    type: fc.constant('image'),
    source: field(
      fc.oneof(
        fc.record({
          type: fc.constant('base64'),
          media_type: field(fc.constantFrom('image/png', 'image/jpeg', '')),
          data: field(fc.base64String({ maxLength: 40 })),
        }),
        fc.record({ type: fc.constant('url'), url: field(imageUrl) }),
        fc.record({ type: fc.constantFrom('file', 'text'), data: shortText }),
      ),
    ),
  }),
  fc.record({ type: fc.constant('document'), source: field(fc.record({ type: fc.constantFrom('text', 'base64'), data: field(shortText) })) }),
  fc.record({
    type: fc.constant('tool_use'),
    id: field(identifier),
    name: field(identifier),
    input: field(fc.dictionary(identifier, fc.jsonValue({ maxDepth: 2 }))),
  }),
  fc.record(
    {
      type: fc.constant('tool_result'),
      tool_use_id: field(identifier),
      content: field(fc.oneof(shortText, fc.array(fc.record({ type: fc.constant('text'), text: shortText }), { maxLength: 2 }))),
      is_error: field(fc.boolean()),
    },
    { requiredKeys: ['type', 'tool_use_id'] },
  ),
  fc.record({ type: fc.constant('thinking'), thinking: field(shortText), signature: field(shortText) }),
  fc.record({ type: fc.constant('redacted_thinking'), data: field(shortText) }),
  fc.record({ type: fc.constantFrom('server_tool_use', 'web_search_tool_result', 'nope'), id: identifier }),
);
const plainAnthropicMessage = fc.record({ role: fc.constant('user'), content: promptText });
const anyAnthropicMessage = fc.record({
  role: field(fc.constantFrom('user', 'assistant', 'system', 'tool')),
  content: fc.oneof(promptText, fc.array(anthropicBlock, { maxLength: 3 }), wrongValue),
});
const anthropicTool = fc.record(
  {
    name: field(identifier),
    description: field(shortText),
    input_schema: field(jsonSchema),
    cache_control: cacheControl,
    type: fc.constantFrom('custom', 'bash_20250124'),
  },
  { requiredKeys: ['name'] },
);

const noisyMessagesBody = withExtras(
  fc.record(
    {
      model: modelField,
      max_tokens: outputTokens,
      messages: fc.oneof(
        { weight: 4, arbitrary: fc.array(plainAnthropicMessage, { minLength: 1, maxLength: 2 }) },
        { weight: 3, arbitrary: fc.array(anyAnthropicMessage, { maxLength: 4 }) },
        { weight: 1, arbitrary: wrongValue },
      ),
      system: field(
        fc.oneof(
          promptText,
          fc.array(fc.record({ type: field(fc.constant('text')), text: field(shortText), cache_control: cacheControl }), { maxLength: 2 }),
        ),
      ),
      stream: field(fc.boolean()),
      stop_sequences: field(fc.array(shortText, { maxLength: 3 })),
      temperature: field(sampling),
      top_p: field(sampling),
      top_k: field(fc.integer({ min: -2, max: 500 })),
      tools: field(fc.array(anthropicTool, { maxLength: 2 })),
      tool_choice: field(
        fc.record(
          { type: field(fc.constantFrom('auto', 'any', 'tool', 'none')), name: field(identifier), disable_parallel_tool_use: field(fc.boolean()) },
          { requiredKeys: ['type'] },
        ),
      ),
      thinking: field(
        fc.record(
          { type: field(fc.constantFrom('enabled', 'disabled', 'adaptive', 'other')), budget_tokens: field(fc.integer({ min: -1, max: 40_000 })) },
          { requiredKeys: ['type'] },
        ),
      ),
      output_config: field(
        fc.record(
          {
            effort: field(fc.constantFrom('low', 'medium', 'high', 'max', 'xhigh')),
            format: field(fc.record({ type: fc.constantFrom('json_schema', 'text'), schema: field(jsonSchema) })),
          },
          { requiredKeys: [] },
        ),
      ),
      metadata: field(fc.record({ user_id: field(shortText) }, { requiredKeys: [] })),
      routing: field(routing),
    },
    { requiredKeys: ['model', 'messages'] },
  ),
);

const validMessagesBody = fc.record(
  {
    model: models,
    max_tokens: validOutputTokens,
    messages: fc.array(
      fc.record({
        role: fc.constant('user'),
        content: fc.oneof(promptText, fc.array(fc.record({ type: fc.constant('text'), text: promptText }), { minLength: 1, maxLength: 2 })),
      }),
      { minLength: 1, maxLength: 2 },
    ),
    system: promptText,
    stream: fc.boolean(),
    temperature: validSampling,
    tools: fc.array(fc.record({ name: identifier, description: shortText, input_schema: validSchema }), { maxLength: 2 }),
    thinking: fc.record({ type: fc.constant('enabled'), budget_tokens: fc.integer({ min: 1024, max: 4000 }) }),
    output_config: fc.record({ effort: fc.constantFrom('low', 'medium', 'high') }),
    metadata: fc.record({ user_id: identifier }),
  },
  { requiredKeys: ['model', 'max_tokens', 'messages'] },
);

export const messagesBody = family(validMessagesBody, noisyMessagesBody);
