import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.ts';

/** Billable requests whose handler has taken over their settlement. */
const handled = new WeakSet<FastifyRequest>();

/**
 * A billable request whose client leaves before its handler runs would never settle: Fastify
 * does not read the body of a connection that is gone, so neither the handler nor the error
 * handler runs, and shutdown would wait for the request forever. It has no hold yet, so it
 * settles here as cancelled, at no cost. From its preHandler on, the handler settles it.
 */
export function settleIfClientLeaves(request: FastifyRequest, reply: FastifyReply): void {
  const settle = () => {
    if (handled.has(request)) return;
    request.metered?.settle('cancelled', 'request_cancelled').catch((error) => {
      request.log.error({ err: error, requestId: request.requestId }, 'could not record the cancelled request');
    });
  };
  // 'close' may already have fired while the request was being authenticated.
  if (reply.raw.destroyed) settle();
  else reply.raw.once('close', settle);
}

/** Hands billable requests to their handler, unless the client has already left (then it settled as cancelled). */
export function installClientDeparture(app: FastifyInstance): void {
  app.addHook('preHandler', async (request, reply) => {
    if (!request.metered) return;
    if (reply.raw.destroyed) throw new GatewayError('request_cancelled', 'The client closed the connection before the request was read.');
    handled.add(request);
  });
}

/**
 * Once the server is closing, every answer tells its client to close the connection, so a
 * keep-alive connection does not outlive its last request by the idle timeout.
 */
export function closeConnectionsWhenClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
}
