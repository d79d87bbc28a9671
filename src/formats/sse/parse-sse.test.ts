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

/** Each case: the chunks as they arrive, and the events they parse into. */
const cases: Array<{ title: string; chunks: Array<string | Uint8Array>; events: SseEvent[] }> = [
  {
    title: 'parses named and unnamed events',
    chunks: ['event: ping\ndata: {"type":"ping"}\n\ndata: hello\n\n'],
    events: [{ event: 'ping', data: '{"type":"ping"}' }, { data: 'hello' }],
  },
  {
    title: 'handles \\r\\n and bare \\r line endings',
    chunks: ['event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r'],
    events: [
      { event: 'a', data: '1' },
      { event: 'b', data: '2' },
    ],
  },
  {
    title: 'splits lines where \\n and \\r endings alternate within one chunk',
    chunks: ['data: 1\n\ndata: 2\r\rdata: 3\r\n\r\ndata: 4\n\r\n'],
    events: [{ data: '1' }, { data: '2' }, { data: '3' }, { data: '4' }],
  },
  {
    title: 'joins multi-line data with \\n and keeps only one leading space off the value',
    chunks: ['data: first\ndata:  second\ndata:third\n\n'],
    events: [{ data: 'first\n second\nthird' }],
  },
  {
    title: 'ignores comments, events without data, retry and unknown fields',
    chunks: [': keep-alive\n\nevent: empty\n\nretry: 10\nfoo: bar\ndata: x\n\n'],
    events: [{ data: 'x' }],
  },
  {
    title: 'reports the last id',
    chunks: ['id: 7\ndata: a\n\ndata: b\n\n'],
    events: [
      { data: 'a', id: '7' },
      { data: 'b', id: '7' },
    ],
  },
  { title: 'drops an unterminated trailing event', chunks: ['data: complete\n\ndata: {"partial'], events: [{ data: 'complete' }] },
  { title: 'strips a byte-order mark at the start', chunks: [Buffer.from('\uFEFFdata: x\n\n', 'utf8')], events: [{ data: 'x' }] },
];

for (const { title, chunks, events } of cases) {
  test(title, async () => {
    assert.deepEqual(await collect(chunks), events);
  });
}

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
