import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import { test } from 'node:test';
import { endWithPieces, jsonPieces } from './json-pieces.ts';

/** What `endWithPieces` wrote to a stream nobody reads until it ended. */
async function written(pieces: Array<string | Buffer>): Promise<{ bytes: Buffer; writes: number }> {
  const stream = new PassThrough();
  let writes = 0;
  const write = stream.write.bind(stream);
  stream.write = ((chunk: never) => (writes++, write(chunk))) as typeof stream.write;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  await Promise.all([endWithPieces(stream, pieces), once(stream, 'end')]);
  return { bytes: Buffer.concat(chunks), writes };
}

test('a body with long strings is JSON.stringify in pieces, and written byte for byte as Buffer.from encodes it whole', async () => {
  // Surrogate pairs straddle every cut after the leading 'a'; lone surrogates are escaped as JSON.stringify escapes them.
  const bodies = [
    { model: 'm', messages: [{ role: 'user', content: 'a' + '😀'.repeat(150_000) }], skip: undefined, list: [undefined, () => 1, 1.5, null] },
    ['漢é'.repeat(170_000) + '\ud800' + 'end"\\\n\u0001', { nested: { deeper: 'x'.repeat(300_000), at: new Date(0) } }],
    'ä'.repeat(400_000),
  ];
  for (const body of bodies) {
    const { pieces, bytes } = await jsonPieces(body);
    const text = JSON.stringify(body);
    assert.ok(pieces.length > 5, 'in pieces');
    assert.ok(pieces.every((piece) => Buffer.isBuffer(piece) && piece.length <= 4 * 64 * 1024));
    assert.equal(Buffer.concat(pieces as Buffer[]).toString(), text);
    assert.equal(bytes, Buffer.byteLength(text));
    const out = await written(pieces);
    assert.ok(out.bytes.equals(Buffer.from(text)), 'same bytes');
    assert.equal(out.writes, pieces.length);
  }
  // What has toJSON is stringified whole, as JSON.stringify would.
  const custom = { toJSON: () => 'y'.repeat(300_000) };
  assert.deepEqual((await jsonPieces(custom)).pieces, [JSON.stringify(custom)]);
  const small = { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(100_000) }] };
  assert.deepEqual(await jsonPieces(small), { pieces: [JSON.stringify(small)], bytes: JSON.stringify(small).length });
  assert.deepEqual(await written(['{"short":true}']), { bytes: Buffer.from('{"short":true}'), writes: 0 });
});

test('a long string given with its JSON text is written as that text, others as JSON.stringify writes them', async () => {
  const long = 'a/b\n'.repeat(100_000);
  const other = 'c/d\n'.repeat(100_000);
  // The client's own escapes: \/ and \u000a, where JSON.stringify writes / and \n.
  const text = Buffer.from(`"${'a\\/b\\u000a'.repeat(100_000)}"`);
  const body = { messages: [{ content: long }, { content: other }, { content: 'short' }] };
  const { pieces, bytes } = await jsonPieces(body, new Map([[long, new Uint8Array(text)]]));
  const sent = Buffer.concat(pieces as Buffer[]);
  assert.equal(bytes, sent.length);
  assert.ok(sent.includes(text), 'the given text, byte for byte');
  assert.ok(sent.includes(JSON.stringify(other)), 'the other string escaped as JSON.stringify escapes it');
  assert.deepEqual(JSON.parse(sent.toString()), body);
  // Another string of the same length is not written as that text.
  const { pieces: again } = await jsonPieces({ content: other }, new Map([[long, new Uint8Array(text)]]));
  assert.equal(Buffer.concat(again as Buffer[]).toString(), JSON.stringify({ content: other }));
});

test('over HTTP with its content-length, the server reads the whole body; a destroyed request stops the writing', async () => {
  const body = { content: '日本語 and emoji 😀 '.repeat(200_000) };
  const { pieces, bytes } = await jsonPieces(body);
  const server = createServer(async (incoming, reply) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    reply.end(String(Buffer.concat(chunks).equals(Buffer.from(JSON.stringify(body)))));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    const post = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-length': bytes } });
    const [answer] = await Promise.all([once(post, 'response'), endWithPieces(post, pieces)]);
    let text = '';
    for await (const chunk of answer[0]) text += chunk;
    assert.equal(text, 'true');

    const cut = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-length': bytes } });
    cut.on('error', () => {});
    const writing = endWithPieces(cut, pieces);
    cut.destroy();
    await writing;
    assert.equal(cut.destroyed, true);
  } finally {
    server.close();
  }
});

test('pieces are written one per turn of the event loop, even to a stream that takes each write at once', async () => {
  // A sink that completes every write on the next tick, as a socket does when the kernel took the bytes at once:
  // each write fills it past its mark, and drain follows before any timer or I/O could run.
  const sink = new Writable({ highWaterMark: 1024, write: (_chunk, _encoding, done) => process.nextTick(done) });
  const pieces = Array.from({ length: 50 }, () => Buffer.alloc(4096, 'x'));
  let turns = 0;
  let counting = true;
  const count = () => {
    turns++;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  await Promise.all([endWithPieces(sink, pieces), once(sink, 'finish')]);
  counting = false;
  // Other work (a timer here, another request in the gateway) ran between the pieces, not only after the last.
  assert.ok(turns >= pieces.length / 2, `the event loop turned ${turns} times for ${pieces.length} pieces`);
});
