import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSse, type SseEvent } from './parse-sse.ts';

async function* from(chunks: Array<string | Uint8Array>): AsyncGenerator<string | Uint8Array> {
  for (const chunk of chunks) yield chunk;
}

async function collect(chunks: Array<string | Uint8Array>): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of parseSse(from(chunks))) events.push(event);
  return events;
}

test('parses named and unnamed events', async () => {
  const events = await collect(['event: ping\ndata: {"type":"ping"}\n\ndata: hello\n\n']);
  assert.deepEqual(events, [{ event: 'ping', data: '{"type":"ping"}' }, { data: 'hello' }]);
});

test('handles \\r\\n and bare \\r line endings', async () => {
  const events = await collect(['event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r']);
  assert.deepEqual(events, [
    { event: 'a', data: '1' },
    { event: 'b', data: '2' },
  ]);
});

test('splits lines where \\n and \\r endings alternate within one chunk', async () => {
  const events = await collect(['data: 1\n\ndata: 2\r\rdata: 3\r\n\r\ndata: 4\n\r\n']);
  assert.deepEqual(events, [{ data: '1' }, { data: '2' }, { data: '3' }, { data: '4' }]);
});

test('joins multi-line data with \\n and keeps only one leading space off the value', async () => {
  const events = await collect(['data: first\ndata:  second\ndata:third\n\n']);
  assert.deepEqual(events, [{ data: 'first\n second\nthird' }]);
});

test('reassembles events split anywhere, including inside \\r\\n and a multi-byte character', async () => {
  const bytes = Buffer.from('event: message_start\r\ndata: {"text":"héllo ✓"}\r\n\r\ndata: [DONE]\r\n\r\n', 'utf8');
  const chunks: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.length; offset += 3) chunks.push(bytes.subarray(offset, offset + 3));
  const events = await collect(chunks);
  assert.deepEqual(events, [{ event: 'message_start', data: '{"text":"héllo ✓"}' }, { data: '[DONE]' }]);
  // Byte-by-byte as well: every split position between \r and \n must be handled.
  const single = await collect([...bytes].map((byte) => Uint8Array.of(byte)));
  assert.deepEqual(single, events);
});

test('ignores comments, events without data, retry and unknown fields', async () => {
  const events = await collect([': keep-alive\n\nevent: empty\n\nretry: 10\nfoo: bar\ndata: x\n\n']);
  assert.deepEqual(events, [{ data: 'x' }]);
});

test('reports the last id', async () => {
  const events = await collect(['id: 7\ndata: a\n\ndata: b\n\n']);
  assert.deepEqual(events, [
    { data: 'a', id: '7' },
    { data: 'b', id: '7' },
  ]);
});

test('drops an unterminated trailing event', async () => {
  const events = await collect(['data: complete\n\ndata: {"partial']);
  assert.deepEqual(events, [{ data: 'complete' }]);
});

test('strips a byte-order mark at the start', async () => {
  const events = await collect([Buffer.from('\uFEFFdata: x\n\n', 'utf8')]);
  assert.deepEqual(events, [{ data: 'x' }]);
});
