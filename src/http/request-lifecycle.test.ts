import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { MeteredRequest } from '../billing/request-meter.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { httpClient, RequestLifecycle, type Ending } from './request-lifecycle.ts';

/** The parts of a request, its reply and its meter that a lifecycle touches, recording what happens to them. */
function fixture(settle: () => Promise<void> = async () => {}) {
  const events: string[] = [];
  const socket = Object.assign(new EventEmitter(), { destroyed: false });
  const response = Object.assign(new EventEmitter(), { destroyed: false, writableFinished: false, writableEnded: false, headersSent: false, socket });
  const reply = {
    raw: response,
    sent: false,
    status: 0,
    body: undefined as unknown,
    header: () => reply,
    headers: () => reply,
    code(status: number) {
      reply.status = status;
      return reply;
    },
    send(body: unknown) {
      events.push(`sent ${(body as { error: { code: string } }).error.code}`);
      reply.body = body;
      return reply;
    },
  };
  const request = { raw: { socket }, headers: {}, requestId: 'req_1', routeOptions: { config: {} }, log: { error: () => events.push('logged') } };
  const meter = {
    async settle(status: string, code: string | null) {
      events.push(`settling ${status} ${code}`);
      await settle();
      events.push('settled');
    },
  };
  const lifecycle = new RequestLifecycle(
    meter as unknown as MeteredRequest,
    httpClient(request as unknown as FastifyRequest, reply as unknown as FastifyReply),
  );
  /** The client goes away: its connection closes before the response finished. */
  const leave = () => {
    response.destroyed = true;
    response.emit('close');
  };
  return { lifecycle, events, reply, leave };
}

const delivered = (events: string[]): Ending => ({ status: 'succeeded', error: null, deliver: () => void events.push('delivered') });

describe('RequestLifecycle', () => {
  test('settles the work’s ending once, then delivers the rest of the answer', async () => {
    const { lifecycle, events } = fixture();
    await lifecycle.serve(async () => delivered(events));
    assert.deepEqual(events, ['settling succeeded null', 'settled', 'delivered']);
  });

  test('a failure of the work settles failed (cancelled when the client left) and sends the envelope after the receipt', async () => {
    const failed = fixture();
    await failed.lifecycle.serve(async () => {
      throw new GatewayError('unsupported_model', 'no such model');
    });
    assert.deepEqual(failed.events, ['settling failed unsupported_model', 'settled', 'sent unsupported_model']);

    const cancelled = fixture();
    await cancelled.lifecycle.serve(async () => {
      throw new GatewayError('request_cancelled', 'gone');
    });
    assert.equal(cancelled.events[0], 'settling cancelled request_cancelled');
  });

  test('a client gone before the work began ends the request at once; the work never runs, a later error changes nothing', async () => {
    const { lifecycle, events, leave } = fixture();
    leave();
    assert.equal(lifecycle.signal.aborted, true);
    let ran = false;
    await lifecycle.serve(async () => {
      ran = true;
      return delivered(events);
    });
    await lifecycle.fail(new GatewayError('rate_limit_exceeded', 'slow down'));
    assert.equal(ran, false);
    assert.deepEqual(events, ['settling cancelled request_cancelled', 'settled']);
  });

  test('a client gone during the work aborts it; the request settles once, with the ending the work returns', async () => {
    const { lifecycle, events, leave } = fixture();
    await lifecycle.serve(async ({ signal }) => {
      leave();
      assert.equal(signal.aborted, true);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(events, [], 'nothing settled while the work still runs');
      throw new GatewayError('request_cancelled', 'gone');
    });
    assert.deepEqual(events.slice(0, 2), ['settling cancelled request_cancelled', 'settled']);
  });

  test('an error before the work settles it failed; the handler then runs nothing', async () => {
    const { lifecycle, events } = fixture();
    await lifecycle.fail(new GatewayError('invalid_request', 'bad body'));
    await lifecycle.serve(async () => delivered(events));
    assert.deepEqual(events, ['settling failed invalid_request', 'settled', 'sent invalid_request']);
  });

  test('a receipt that cannot be written withholds the answer: the stream’s own last event, else internal_error', async () => {
    const broken = () => Promise.reject(new Error('disk I/O error'));
    const json = fixture(broken);
    await json.lifecycle.serve(async () => delivered(json.events));
    assert.deepEqual(json.events, ['settling succeeded null', 'logged', 'sent internal_error']);
    assert.equal(json.reply.status, 500);

    const stream = fixture(broken);
    await stream.lifecycle.serve(async () => ({
      ...delivered(stream.events),
      unrecorded: (error) => void stream.events.push(`event ${error.code}`),
    }));
    assert.deepEqual(stream.events, ['settling succeeded null', 'logged', 'event internal_error']);
  });
});
