import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../errors/gateway-error.ts';
import { image, text, toolCall, toolResult } from '../../testing/canonical-builders.ts';
import { parseResponsesRequest } from './parse-responses-request.ts';

const base = { model: 'svc/fast', input: 'hi' };

function invalidRequest(body: unknown, message: RegExp) {
  assert.throws(
    () => parseResponsesRequest(body),
    (error: unknown) => error instanceof GatewayError && error.code === 'invalid_request' && message.test(error.message),
  );
}

describe('input', () => {
  test('a string is one user message; instructions come first as the system prompt', () => {
    const parsed = parseResponsesRequest({ ...base, instructions: 'Be brief.' });
    assert.deepEqual(parsed.request.messages, [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
    ]);
    assert.equal(parsed.stream, false);
    assert.deepEqual(parsed.routing, { fallback: true });
  });

  test('messages, calls and outputs keep their order; a call joins the assistant message before it', () => {
    const parsed = parseResponsesRequest({
      model: 'svc/fast',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'rules' }] },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'look' },
            { type: 'input_image', image_url: 'data:image/png;base64,AA', detail: 'low' },
          ],
        },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA...' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Running it.', annotations: [] }] },
        { type: 'function_call', call_id: 'call_1', name: 'shell', arguments: '{"command":["ls"]}' },
        { type: 'function_call', call_id: 'call_2', name: 'read', namespace: 'fs', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
        {
          type: 'function_call_output',
          call_id: 'call_2',
          output: [
            { type: 'input_text', text: 'x' },
            { type: 'input_image', image_url: 'https://x/y.png' },
          ],
        },
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
        { type: 'custom_tool_call', call_id: 'call_3', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'custom_tool_call_output', call_id: 'call_3', output: { content: 'failed', success: false } },
        { type: 'function_call_output', call_id: 'call_gone', output: 'orphan of a dropped call' },
        { type: 'compaction', encrypted_content: 'opaque' },
      ],
    });
    assert.deepEqual(parsed.request.messages, [
      { role: 'developer', content: 'rules' },
      { role: 'user', content: [text('look'), image('data:image/png;base64,AA', { detail: 'low' })] },
      {
        role: 'assistant',
        content: 'Running it.',
        toolCalls: [toolCall('call_1', 'shell', '{"command":["ls"]}'), toolCall('call_2', 'fs__read', '{}')],
      },
      toolResult('call_1', 'a.txt'),
      toolResult('call_2', [text('x'), image('https://x/y.png')]),
      { role: 'assistant', content: null, toolCalls: [toolCall('call_3', 'apply_patch', '{"input":"*** Begin Patch"}')] },
      toolResult('call_3', 'failed', { isError: true }),
    ]);
  });

  test('references to stored objects are refused with a message that says why', () => {
    invalidRequest({ ...base, input: [{ type: 'item_reference', id: 'msg_1' }] }, /stateless/);
    invalidRequest({ ...base, input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] }, /file_id/);
    invalidRequest({ ...base, input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }] }, /input_file/);
  });

  test('an input with nothing to answer is invalid', () => {
    invalidRequest({ ...base, input: [{ type: 'reasoning', summary: [] }] }, /nothing|no message/);
    invalidRequest({ ...base, input: [] }, /input is required/);
    invalidRequest({ model: 'm' }, /input is required/);
    invalidRequest({ input: 'x' }, /model is required/);
    invalidRequest({ ...base, input: [{ role: 'robot', content: 'x' }] }, /role/);
  });
});

describe('tools', () => {
  const tools = [
    { type: 'function', name: 'shell', description: 'Run', parameters: { type: 'object', properties: {} }, strict: false },
    { type: 'custom', name: 'apply_patch', description: 'Patch files', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } },
    { type: 'namespace', name: 'fs', description: 'Files', tools: [{ type: 'function', name: 'read', parameters: { type: 'object' } }] },
    { type: 'web_search', external_web_access: false },
    { type: 'local_shell' },
  ];

  test('function, custom and namespace tools are translated; hosted tools are dropped', () => {
    const parsed = parseResponsesRequest({ ...base, tools, tool_choice: 'auto', parallel_tool_calls: false });
    assert.deepEqual(
      parsed.request.tools!.map((tool) => tool.name),
      ['shell', 'apply_patch', 'fs__read'],
    );
    assert.deepEqual(parsed.request.tools![0], { name: 'shell', description: 'Run', parameters: { type: 'object', properties: {} }, strict: false });
    const custom = parsed.request.tools![1]!;
    assert.match(custom.description!, /^Patch files\n\nThe input must follow this lark grammar:\nstart: "x"$/);
    assert.deepEqual((custom.parameters as any).required, ['input']);
    assert.deepEqual(
      [...parsed.toolOrigins.entries()],
      [
        ['shell', { type: 'function', name: 'shell' }],
        ['apply_patch', { type: 'custom', name: 'apply_patch' }],
        ['fs__read', { type: 'function', name: 'read', namespace: 'fs' }],
      ],
    );
    assert.equal(parsed.request.toolChoice, 'auto');
    assert.equal(parsed.request.parallelToolCalls, false);
    assert.deepEqual(parsed.echo.tools, tools, 'the response repeats the tools as sent');
  });

  test("the tools of an additional_tools input item (Codex, for the models its catalog knows) are the request's tools too", () => {
    const parsed = parseResponsesRequest({
      model: 'svc/fast',
      tools: [tools[0]],
      input: [
        { type: 'additional_tools', id: 'at_1', role: 'developer', tools: [tools[2], tools[3]] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'read a file' }] },
      ],
    });
    assert.deepEqual(
      parsed.request.tools!.map((tool) => tool.name),
      ['shell', 'fs__read'],
    );
    assert.deepEqual(parsed.request.messages, [{ role: 'user', content: [text('read a file')] }]);
  });

  test("Codex's compaction trigger asks the model for a note; OpenAI's encrypted compaction is dropped", () => {
    const parsed = parseResponsesRequest({
      model: 'svc/fast',
      tools,
      input: [
        { type: 'compaction', encrypted_content: 'gAAAA-openai-only' },
        { type: 'message', role: 'user', content: 'hi' },
        { type: 'compaction_trigger' },
      ],
    });
    assert.equal(parsed.compaction, true);
    assert.deepEqual(
      parsed.request.messages.map((message) => message.role),
      ['user', 'user'],
    );
    assert.match(JSON.stringify(parsed.request.messages[1]), /handoff note/);
    assert.equal(parseResponsesRequest(base).compaction, false);
  });

  test('a prewarm (a socket frame with generate: false) may have no input at all; a request may not', () => {
    assert.equal(parseResponsesRequest({ model: 'svc/fast', input: [] }, {}, { prewarm: true }).model, 'svc/fast');
    invalidRequest({ model: 'svc/fast', input: [] }, /input/);
  });

  test('tool_choice: options, named function or custom tool, allowed_tools mode, hosted tool -> auto', () => {
    const choice = (tool_choice: unknown) => parseResponsesRequest({ ...base, tools, tool_choice }).request.toolChoice;
    assert.equal(choice('required'), 'required');
    assert.deepEqual(choice({ type: 'function', name: 'shell' }), { name: 'shell' });
    assert.deepEqual(choice({ type: 'custom', name: 'apply_patch' }), { name: 'apply_patch' });
    assert.equal(choice({ type: 'allowed_tools', mode: 'required', tools: [] }), 'required');
    assert.equal(choice({ type: 'web_search' }), 'auto');
    invalidRequest({ ...base, tools, tool_choice: 'sometimes' }, /tool_choice/);
  });

  test('when every tool was dropped, tool_choice and parallel_tool_calls go too', () => {
    const parsed = parseResponsesRequest({ ...base, tools: [{ type: 'web_search' }], tool_choice: 'required', parallel_tool_calls: true });
    assert.equal(parsed.request.tools, undefined);
    assert.equal(parsed.request.toolChoice, undefined);
    assert.equal(parsed.request.parallelToolCalls, undefined);
  });
});

describe('options', () => {
  test('reasoning effort maps to gateway levels; summary is remembered', () => {
    const effort = (value: string) => parseResponsesRequest({ ...base, reasoning: { effort: value } }).request.reasoningEffort;
    assert.deepEqual(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'].map(effort), ['none', 'low', 'low', 'medium', 'xhigh', 'xhigh']);
    assert.equal(parseResponsesRequest(base).request.reasoningEffort, undefined, 'absent: the alias default applies');
    invalidRequest({ ...base, reasoning: { effort: 'max' } }, /reasoning.effort/);
    const parsed = parseResponsesRequest({ ...base, reasoning: { effort: 'medium', summary: 'auto' } });
    assert.equal(parsed.reasoningSummary, true);
    assert.deepEqual(parsed.echo.reasoning, { effort: 'medium', summary: 'auto' });
    assert.equal(parseResponsesRequest(base).reasoningSummary, false);
  });

  test('only fields with a chat-completions twin reach the provider', () => {
    const parsed = parseResponsesRequest({
      ...base,
      stream: true,
      max_output_tokens: 500,
      temperature: 0.3,
      top_p: 0.9,
      store: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'conversation-1',
      user: 'alice',
      safety_identifier: 'hash-1',
      metadata: { ticket: '42' },
      service_tier: 'priority',
      truncation: 'auto',
      text: { verbosity: 'low', format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
      stream_options: { include_obfuscation: false },
      routing: { fallback: false },
    });
    assert.equal(parsed.stream, true);
    assert.deepEqual(parsed.routing, { fallback: false });
    assert.equal(parsed.request.maxOutputTokens, 500);
    assert.equal(parsed.request.temperature, 0.3);
    assert.equal(parsed.request.topP, 0.9);
    assert.deepEqual(parsed.request.responseFormat, { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true });
    assert.deepEqual(parsed.request.passThrough, {
      format: 'openai',
      fields: {
        user: 'alice',
        safety_identifier: 'hash-1',
        prompt_cache_key: 'conversation-1',
      },
    });
    assert.equal(parsed.echo.store, false, 'nothing is stored, whatever the client asked');
    assert.deepEqual(parsed.echo.metadata, { ticket: '42' });
    assert.equal(parsed.echo.truncation, 'auto');
  });

  test('what needs server-side state is refused', () => {
    invalidRequest({ ...base, previous_response_id: 'resp_1' }, /previous_response_id.*stateless/);
    invalidRequest({ ...base, conversation: 'conv_1' }, /conversation/);
    invalidRequest({ ...base, prompt: { id: 'pmpt_1' } }, /prompt/);
    invalidRequest({ ...base, background: true }, /background/);
    assert.doesNotThrow(() => parseResponsesRequest({ ...base, previous_response_id: null, store: false }));
  });

  test('bad values name the field', () => {
    invalidRequest({ ...base, max_output_tokens: 0 }, /max_output_tokens/);
    invalidRequest({ ...base, temperature: 'hot' }, /temperature/);
    invalidRequest({ ...base, stream: 'yes' }, /stream/);
    invalidRequest({ ...base, text: { format: { type: 'xml' } } }, /text.format/);
    invalidRequest({ ...base, routing: { allowed_models: 'up/alpha' } }, /routing.allowed_models/);
  });
});
