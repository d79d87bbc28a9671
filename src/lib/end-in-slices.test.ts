import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { endInSlices } from './end-in-slices.ts';

/** What `endInSlices` wrote to a stream nobody reads until it ended. */
async function written(text: string): Promise<{ bytes: Buffer; writes: number }> {
  const stream = new PassThrough();
  let writes = 0;
  const write = stream.write.bind(stream);
  stream.write = ((chunk: never) => (writes++, write(chunk))) as typeof stream.write;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  await Promise.all([endInSlices(stream, text), once(stream, 'end')]);
  return { bytes: Buffer.concat(chunks), writes };
}

test('a long text is written in slices, byte for byte as Buffer.from encodes it whole', async () => {
  // Surrogate pairs straddle every slice boundary after the leading 'a'; a lone surrogate stays U+FFFD.
  for (const text of ['a' + '😀'.repeat(100_000), '漢é'.repeat(70_000) + '\ud800' + 'end', 'x'.repeat(200_000)]) {
    const { bytes, writes } = await written(text);
    assert.ok(bytes.equals(Buffer.from(text)), 'same bytes');
    assert.ok(writes > 1, 'in slices');
  }
  assert.deepEqual(await written('{"short":true}'), { bytes: Buffer.from('{"short":true}'), writes: 0 });
});

test('over HTTP with its content-length, the server reads the whole body; a destroyed request stops the writing', async () => {
  const text = '日本語 and emoji 😀 '.repeat(200_000);
  const server = createServer(async (incoming, reply) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    reply.end(String(Buffer.concat(chunks).equals(Buffer.from(text))));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    const post = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-length': Buffer.byteLength(text) } });
    const [answer] = await Promise.all([once(post, 'response'), endInSlices(post, text)]);
    let body = '';
    for await (const chunk of answer[0]) body += chunk;
    assert.equal(body, 'true');

    const cut = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-length': Buffer.byteLength(text) } });
    cut.on('error', () => {});
    const writing = endInSlices(cut, text);
    cut.destroy();
    await writing;
    assert.equal(cut.destroyed, true);
  } finally {
    server.close();
  }
});
