import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../errors/gateway-error.ts';
import { array, integer, nullable, object, string, tagged, taggedOpen, union, literal } from '../lib/wire-schema.ts';
import { parseMessagesRequest } from './anthropic-messages/parse-messages-request.ts';
import { parseChatCompletionRequest } from './openai-chat/parse-chat-request.ts';
import { parseResponsesRequest } from './openai-responses/parse-responses-request.ts';
import { bodyValidator, fieldOf } from './validate-body.ts';

function messageOf(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    assert.ok(error instanceof GatewayError && error.code === 'invalid_request', String(error));
    return error.message;
  }
  return assert.fail('accepted');
}

test('field names as clients write them', () => {
  assert.equal(fieldOf('/messages/0/content/12/type'), 'messages[0].content[12].type');
  assert.equal(fieldOf('', 'model'), 'model');
  assert.equal(fieldOf('/a~1b/c~0d'), 'a/b.c~d');
});

test('messages made from the schema: the deepest failure, its own message or one said from the schema', () => {
  const part = tagged('type', [
    object({ type: literal('text'), text: string() }),
    object({ type: literal('image'), url: string({ notEmpty: true }) }),
  ]);
  const validate = bodyValidator(
    object(
      { name: string({ notEmpty: true, message: 'is required' }), parts: array(part, { minItems: 1 }) },
      {
        size: nullable(integer({ minimum: 1 })),
        content: union([string(), array(part)], { message: 'must be text or parts' }),
        other: taggedOpen('kind', [object({ kind: literal('a'), a: string() }, {}, { missing: 'needs a' })]),
      },
      { message: 'must be a JSON object' },
    ),
  );
  const base = { name: 'n', parts: [{ type: 'text', text: 'x' }] };
  assert.deepEqual(validate(base), base, 'a body that fits comes back as it is');
  assert.equal(
    messageOf(() => validate([])),
    'the body must be a JSON object',
  );
  assert.equal(
    messageOf(() => validate({ parts: base.parts })),
    'name is required',
  );
  assert.equal(
    messageOf(() => validate({ ...base, parts: [] })),
    'parts must be a non-empty array',
  );
  assert.equal(
    messageOf(() => validate({ ...base, parts: [{ type: 'video' }] })),
    'parts[0].type must be one of text, image (not "video")',
  );
  assert.equal(
    messageOf(() => validate({ ...base, parts: [{ type: 'image', url: '' }] })),
    'parts[0].url must be a non-empty string',
  );
  assert.equal(
    messageOf(() => validate({ ...base, size: 0 })),
    'size must be a positive integer',
  );
  assert.equal(
    messageOf(() => validate({ ...base, content: 5 })),
    'content must be text or parts',
  );
  assert.equal(
    messageOf(() => validate({ ...base, content: [{ type: 'text' }] })),
    'content[0].text is required',
  );
  assert.equal(
    messageOf(() => validate({ ...base, other: { kind: 'a' } })),
    'other needs a',
  );
  assert.doesNotThrow(() => validate({ ...base, other: { kind: 'b', anything: 1 } }), 'an open union lets other kinds through');
  assert.equal(
    messageOf(() => validate({ ...base, other: {} })),
    'other.kind is required',
  );
});

test('the readers name the field as they always have', () => {
  const chat = { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] };
  const cases: Array<[(body: unknown) => unknown, unknown, string]> = [
    [parseChatCompletionRequest, { messages: chat.messages }, 'model is required'],
    [parseChatCompletionRequest, { model: 'x' }, 'messages is required and must be a non-empty array'],
    [
      parseChatCompletionRequest,
      { ...chat, messages: [{ role: 'wizard' }] },
      'messages[0].role must be one of system, developer, user, assistant, tool (not "wizard")',
    ],
    [parseChatCompletionRequest, { ...chat, messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id is required'],
    [
      parseChatCompletionRequest,
      { ...chat, messages: [{ role: 'assistant', tool_calls: [{ id: 'c' }] }] },
      'messages[0].tool_calls[0] must have id and function.name',
    ],
    [
      parseChatCompletionRequest,
      { ...chat, tool_choice: 'sometimes' },
      'tool_choice must be auto, none, required or {type: "function", function: {name}}',
    ],
    [parseChatCompletionRequest, { ...chat, stop: 5 }, 'stop must be a string or an array of strings'],
    [parseChatCompletionRequest, { ...chat, routing: { allowed_models: 'a/b' } }, 'routing.allowed_models must be an array of model ids'],
    [
      parseMessagesRequest,
      { ...chat, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file' } }] }] },
      'messages[0].content[0].source.type must be one of base64, url (not "file")',
    ],
    [
      parseMessagesRequest,
      { ...chat, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't' }] }] },
      'messages[0].content[0] needs id and name',
    ],
    [parseMessagesRequest, { ...chat, thinking: 'on' }, 'thinking must be an object with a type'],
    [parseMessagesRequest, { ...chat, top_k: -1 }, 'top_k must be a non-negative integer'],
    [parseResponsesRequest, { model: 'm' }, 'input is required: a string or a non-empty array of items'],
    [
      parseResponsesRequest,
      { model: 'm', input: 'x', previous_response_id: 'resp_1' },
      'previous_response_id needs stored responses; the gateway is stateless: send the whole conversation in input (with store: false)',
    ],
    [
      parseResponsesRequest,
      { model: 'm', input: [{ type: 'item_reference', id: 'i' }] },
      'input[0]: item_reference needs stored items; the gateway is stateless, send the item itself',
    ],
    [
      parseResponsesRequest,
      { model: 'm', input: 'x', text: { format: { type: 'json_schema' } } },
      'text.format needs name and schema for json_schema',
    ],
  ];
  for (const [parse, body, message] of cases)
    assert.equal(
      messageOf(() => parse(body)),
      message,
    );
});

test('compile() does ahead what the first body would, once; the checker answers the same after it', () => {
  const validate = bodyValidator(object({ name: string({ notEmpty: true }) }));
  assert.equal(validate.compiled(), false, 'nothing is compiled until asked');
  validate.compile();
  assert.equal(validate.compiled(), true);
  validate.compile();
  assert.deepEqual(validate({ name: 'n' }), { name: 'n' });
  assert.equal(
    messageOf(() => validate({ name: '' })),
    'name must be a non-empty string',
  );
  const lazy = bodyValidator(object({ name: string() }));
  assert.deepEqual(lazy({ name: 'n' }), { name: 'n' });
  assert.equal(lazy.compiled(), true, 'or on first use, as before');
});
