import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SseWriter } from './sse-writer.ts';

/** A server whose one response is written by `serve`; resolves with the raw body a client read, from when `reading` settles. */
async function exchange(serve: (writer: SseWriter) => Promise<void>, reading: Promise<unknown> = Promise.resolve()): Promise<string> {
  const server = http.createServer((_request, response) => {
    const writer = new SseWriter(response);
    writer.open({ 'x-test': 'yes' });
    void serve(writer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise<string>((resolve, reject) => {
      http.get({ port, host: '127.0.0.1', path: '/' }, (response) => {
        assert.equal(response.headers['content-type'], 'text/event-stream; charset=utf-8');
        assert.equal(response.headers['x-test'], 'yes');
        const pieces: Buffer[] = [];
        response.pause();
        void reading.then(() => response.resume());
        response.on('data', (piece: Buffer) => pieces.push(piece));
        response.on('end', () => resolve(Buffer.concat(pieces).toString('utf8')));
        response.on('error', reject);
      });
    });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test('events written in one tick, in later ticks and at the end all arrive in order', async () => {
  const body = await exchange(async (writer) => {
    writer.write('data: 1\n\n');
    writer.write('data: 2\n\n');
    await new Promise((resolve) => setTimeout(resolve, 10));
    writer.write('data: 3\n\n');
    writer.write('');
    writer.write('data: [DONE]\n\n');
    writer.end();
  });
  assert.equal(body, 'data: 1\n\ndata: 2\n\ndata: 3\n\ndata: [DONE]\n\n');
});

test('a client slower than the writer gets a promise of the drain, and every byte once it reads', async () => {
  const event = `data: ${'x'.repeat(256 * 1024)}\n\n`;
  let waited = 0;
  // The client reads once the writer first waits for it (or, failing that, has written everything):
  // 16 MiB is more than the loopback socket's buffers take while nobody reads.
  let firstWait!: () => void;
  const waiting = new Promise<void>((resolve) => (firstWait = resolve));
  const body = await exchange(async (writer) => {
    for (let index = 0; index < 64; index++) {
      const drained = writer.write(event);
      if (drained) {
        waited++;
        firstWait();
        await drained;
      }
      // One event per tick, as a stream whose upstream reads carry one event each.
      await new Promise((resolve) => setImmediate(resolve));
    }
    firstWait();
    writer.end();
  }, waiting);
  assert.ok(waited > 0, 'the writer waited for the client at least once');
  assert.equal(body.length, event.length * 64);
});

test('writing after the client left is a no-op', async () => {
  const server = http.createServer((_request, response) => {
    const writer = new SseWriter(response);
    writer.open({});
    response.destroy();
    assert.equal(writer.closed, true);
    assert.equal(writer.write('data: late\n\n'), undefined);
    writer.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => http.get({ port, host: '127.0.0.1', path: '/' }).on('error', () => resolve()));
  await new Promise((resolve) => server.close(resolve));
});
