import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { GatewayMetrics } from './gateway-metrics.ts';

/** GET /metrics on the main port: public (no API key), like /health. */
export function registerMetricsRoute(app: FastifyInstance, metrics: GatewayMetrics): void {
  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', metrics.contentType).header('cache-control', 'no-store');
    return metrics.render();
  });
}

/** GET /metrics on a port of its own (config metrics.port), off the public one. */
export async function startMetricsServer(metrics: GatewayMetrics, host: string, port: number): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    metrics.render().then(
      (text) => response.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' }).end(text),
      () => response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
