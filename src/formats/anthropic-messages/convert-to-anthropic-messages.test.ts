import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { image, text, toolCall } from '../../testing/canonical-builders.ts';
import { convert, user } from './anthropic-request-test-kit.ts';
import { base64Image, urlImage } from './anthropic-wire-test-kit.ts';

describe('messages', () => {
  test('joins system and developer messages into system, wherever they are', () => {
    const body = convert({
      messages: [{ role: 'system', content: 'Be brief.' }, user('hi'), { role: 'developer', content: 'Use French.' }],
    });
    assert.equal(body.system, 'Be brief.\n\nUse French.');
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });

  test('leaves system out when there is none', () => {
    assert.equal('system' in convert({}), false);
  });

  test('merges consecutive same-role messages so roles alternate', () => {
    const body = convert({
      messages: [user('a'), user('b'), { role: 'assistant', content: 'c' }, { role: 'assistant', content: 'd' }, user('e')],
    });
    assert.deepEqual(body.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'c' },
          { type: 'text', text: 'd' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'e' }] },
    ]);
  });

  test('drops empty and whitespace-only text, and assistant turns left empty', () => {
    const body = convert({
      messages: [
        { role: 'user', content: [text(' '), text('q')] },
        { role: 'assistant', content: '' },
        { role: 'assistant', content: null },
        user('again'),
      ],
    });
    assert.deepEqual(body.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'q' },
          { type: 'text', text: 'again' },
        ],
      },
    ]);
  });

  test('round-trips a tool call: tool_use blocks, then one user turn of tool_result blocks', () => {
    const body = convert({
      messages: [
        user('weather in Paris and Rome?'),
        {
          role: 'assistant',
          content: 'Checking.',
          toolCalls: [toolCall('toolu_1', 'get_weather', '{"city":"Paris"}'), toolCall('toolu_2', 'get_weather', 'not json')],
        },
        { role: 'tool', toolCallId: 'toolu_1', content: '18C' },
        { role: 'tool', toolCallId: 'toolu_2', content: '' },
        user('thanks'),
      ],
    });
    assert.deepEqual(body.messages.slice(1), [
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' },
          { type: 'tool_result', tool_use_id: 'toolu_2' },
          { type: 'text', text: 'thanks' },
        ],
      },
    ]);
  });

  test('keeps tool results first in a user turn they were merged into', () => {
    const body = convert({
      messages: [
        { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'f', arguments: '[]' }] },
        user('by the way'),
        { role: 'tool', toolCallId: 'call_1', content: 'ok' },
      ],
    });
    assert.deepEqual(
      body.messages[1]!.content.map((block) => block.type),
      ['tool_result', 'text'],
    );
    assert.deepEqual(body.messages[0]!.content[0], { type: 'tool_use', id: 'call_1', name: 'f', input: {} });
  });

  test('rewrites tool ids Anthropic would reject, the same way on both sides', () => {
    const body = convert({
      messages: [
        { role: 'assistant', content: null, toolCalls: [{ id: 'functions.get_weather:0', name: 'get_weather', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'functions.get_weather:0', content: 'sunny' },
      ],
    });
    const toolUse = body.messages[0]!.content[0] as { id: string };
    const toolResult = body.messages[1]!.content[0] as { tool_use_id: string };
    assert.equal(toolUse.id, 'functions_get_weather_0');
    assert.equal(toolResult.tool_use_id, toolUse.id);
  });

  test('turns data: URLs into base64 sources and http(s) URLs into url sources', () => {
    const body = convert({
      messages: [
        {
          role: 'user',
          content: [
            text('what is this?'),
            image('data:image/png;base64,iVBORw0KGgo='),
            image('https://example.com/cat.jpg', { detail: 'high' }),
            image('data:image/svg+xml,%3Csvg%2F%3E'),
          ],
        },
      ],
    });
    assert.deepEqual(body.messages[0]!.content.slice(1), [
      base64Image('image/png', 'iVBORw0KGgo='),
      urlImage('https://example.com/cat.jpg'),
      base64Image('image/svg+xml', Buffer.from('<svg/>').toString('base64')),
    ]);
  });
});
