import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { GatewayConfig } from '../config/schema.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';

/** True for an address only this host reaches: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(bare);
}

/**
 * Where /metrics is served: on a port of its own (metrics.port), else on the public port when that
 * listens on loopback only or metrics.public says so, else nowhere (the spend and key series it
 * carries are not for whoever reaches the API).
 */
export function metricsPlacement(config: GatewayConfig): 'own-port' | 'public-port' | 'none' {
  if (!config.metrics.enabled) return 'none';
  if (config.metrics.port !== undefined) return 'own-port';
  return config.metrics.public || isLoopback(config.server.host) ? 'public-port' : 'none';
}

/** GET /metrics on the main port: no API key, like /health. */
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
