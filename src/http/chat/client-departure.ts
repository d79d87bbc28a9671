import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/**
 * Calls `departed` once if the client goes away before its response has been written: at once
 * when it is gone already. Registered when the request is opened, before anything is awaited, so
 * a departure at any later point is heard.
 *
 * The response's own 'close' tells for a response that has its connection. A response queued
 * behind another on its connection (HTTP pipelining) has none yet: Node never closes it when the
 * connection drops, so the connection's 'close' is what tells then.
 */
export function watchDeparture(request: IncomingMessage, response: ServerResponse, departed: () => void): void {
  const socket = request.socket;
  if (response.destroyed || socket.destroyed) {
    departed();
    return;
  }
  const closed = () => {
    if (!response.writableFinished) departed();
  };
  response.once('close', closed);
  if (response.socket !== null) return;
  socket.once('close', closed);
  // Its turn came and it finished: the connection's later end is no departure of this request.
  response.once('close', () => socket.off('close', closed));
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
