import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';
import { sendRawBytes } from './helpers/raw-http.ts';

/**
 * Request smuggling and slow clients: framing that two parsers could read two ways is refused
 * whole, and a client that sends its request a byte at a time is cut by a deadline without
 * holding anyone else back.
 */

const chat = JSON.stringify({ model: 'up/alpha', messages: [{ role: 'user', content: 'smuggled' }] });

describe('conflicting Content-Length and Transfer-Encoding: refused, nothing smuggled through', () => {
  let harness: Harness;
  let host: string;
  before(async () => {
    harness = await startHarness();
    host = new URL(harness.gateway.url).host;
  });
  after(() => harness.close());

  test('with a valid key, each framing trick gets one 400 and a closed connection; the request hidden in the body never runs', async () => {
    const smuggled = `POST /v1/chat/completions HTTP/1.1\r\nhost: ${host}\r\nauthorization: Bearer ${harness.key}\r\ncontent-type: application/json\r\ncontent-length: ${chat.length}\r\n\r\n${chat}`;
    const head = (framing: string) =>
      `POST /v1/chat/completions HTTP/1.1\r\nhost: ${host}\r\nauthorization: Bearer ${harness.key}\r\ncontent-type: application/json\r\n${framing}\r\n`;
    const tricks = [
      // CL.TE: a front end that reads Content-Length would pass the smuggled request on as the body.
      head(`content-length: ${4 + smuggled.length}\r\ntransfer-encoding: chunked\r\n`) + `0\r\n\r\n${smuggled}`,
      head(`transfer-encoding: chunked\r\ncontent-length: 4\r\n`) + `0\r\n\r\n${smuggled}`,
      head(`content-length: 5\r\ntransfer-encoding: chunked, identity\r\n`) + `0\r\n\r\n${smuggled}`,
      head(`content-length: 5\r\ntransfer-encoding : chunked\r\n`) + `0\r\n\r\n${smuggled}`,
      head(`content-length: 5\r\ntransfer-encoding:\tchunked\r\n`) + `0\r\n\r\n${smuggled}`,
      head(`content-length: 5\r\ntransfer-encoding: xchunked\r\n`) + `0\r\n\r\n${smuggled}`,
      head(`content-length: 5\r\ncontent-length: ${smuggled.length}\r\n`) + smuggled,
      head(`content-length: 5, ${smuggled.length}\r\n`) + smuggled,
      head(`transfer-encoding: chunked\r\ntransfer-encoding: identity\r\n`) + `0\r\n\r\n${smuggled}`,
    ];
    const receiptsBefore = ((await (await harness.get('/v1/receipts?limit=100')).json()) as { data: unknown[] }).data.length;
    for (const trick of tricks) {
      const responses = await sendRawBytes(harness.gateway.url, Buffer.from(trick, 'latin1'));
      assert.equal(responses.length, 1, `one answer, not one per request read:\n${JSON.stringify(trick.slice(0, 200))}`);
      assert.equal(responses[0]!.status, 400, JSON.stringify(trick.slice(0, 200)));
      assert.equal(responses[0]!.headers.connection, 'close');
      assert.equal(JSON.parse(responses[0]!.body).error.code, 'invalid_request');
    }
    assert.equal(harness.fake.requests.length, 0, 'no provider call was made');
    const receiptsAfter = ((await (await harness.get('/v1/receipts?limit=100')).json()) as { data: unknown[] }).data.length;
    assert.equal(receiptsAfter, receiptsBefore, 'no model request ran');
  });
});

/** Opens a connection and writes `head`, then nothing more until the test says. */
function openSlow(url: string, head: string): Promise<{ socket: Socket; answer: Promise<string> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(head);
      resolve({ socket, answer });
    });
    let text = '';
    const answer = new Promise<string>((done) => {
      socket.on('data', (bytes) => (text += bytes.toString('latin1')));
      socket.on('close', () => done(text));
    });
    socket.on('error', () => {});
    socket.once('error', reject);
  });
}

describe('a client trickling its headers or body is cut by server.headers_timeout_ms / request_timeout_ms', () => {
  let harness: Harness;
  let host: string;
  before(async () => {
    harness = await startHarness({
      editConfig: (text) =>
        text.replace(
          'server: { host: 127.0.0.1, port: 0 }',
          'server: { host: 127.0.0.1, port: 0, headers_timeout_ms: 400, request_timeout_ms: 800 }',
        ),
    });
    host = new URL(harness.gateway.url).host;
  });
  after(() => harness.close());

  test('headers never finished, a body a byte at a time, a connection that says nothing: each gets 408 and is closed; others are served meanwhile', async () => {
    const slowHeaders = await openSlow(harness.gateway.url, `GET /v1/models HTTP/1.1\r\nhost: ${host}\r\nx-slow: a`);
    const silent = await openSlow(harness.gateway.url, '');
    const slowBody = await openSlow(
      harness.gateway.url,
      `POST /v1/chat/completions HTTP/1.1\r\nhost: ${host}\r\nauthorization: Bearer ${harness.key}\r\ncontent-type: application/json\r\ncontent-length: ${chat.length}\r\n\r\n`,
    );
    // A byte of headers and a byte of body every 100 ms: never idle, never done.
    let sent = 0;
    const trickle = setInterval(() => {
      if (!slowHeaders.socket.destroyed) slowHeaders.socket.write('a');
      if (!slowBody.socket.destroyed && sent < chat.length - 1) slowBody.socket.write(chat[sent++]!);
    }, 100);
    try {
      // Served while the three hang on: the slow clients hold no one back.
      const served = await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(served.status, 200);
      const [headersAnswer, bodyAnswer, silentAnswer] = await Promise.all([slowHeaders.answer, slowBody.answer, silent.answer]);
      for (const [name, answer] of [
        ['headers trickled', headersAnswer],
        ['body trickled', bodyAnswer],
      ] as const) {
        assert.match(answer, /^HTTP\/1\.1 408 /, `${name}: ${answer.slice(0, 200)}`);
        assert.match(answer, /"code":"invalid_request"/);
      }
      assert.ok(silentAnswer === '' || /^HTTP\/1\.1 408 /.test(silentAnswer), `a connection that never spoke is closed: ${silentAnswer}`);
      assert.ok(sent < chat.length - 1, 'the body was cut before it was done');
    } finally {
      clearInterval(trickle);
      for (const slow of [slowHeaders, silent, slowBody]) slow.socket.destroy();
    }
    // The cut request was metered from its key and closed at no cost, its hold never placed.
    let receipts: { status: string; cost: string }[] = [];
    for (let tries = 0; tries < 50; tries++) {
      receipts = ((await (await harness.get('/v1/receipts?limit=10')).json()) as { data: { status: string; cost: string }[] }).data;
      if (receipts.length === 2) break;
      await sleep(50);
    }
    assert.equal(receipts.length, 2);
    const cut = receipts.find((receipt) => receipt.status !== 'succeeded')!;
    assert.ok(cut, 'the trickled request has its receipt');
    assert.equal(Number(cut.cost), 0);
    const balance = (await (await harness.get('/v1/balance')).json()) as { holds: { count: number } };
    assert.equal(balance.holds.count, 0, 'no hold is left behind');
  });
});
