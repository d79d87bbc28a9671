import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from './gateway-deps.ts';

/**
 * `/health`: the process is alive (no dependency is touched). `/ready`: it can serve, its database
 * and Redis answering (migrations ran before the port opened); 503 otherwise. Both are public
 * (no API key), outside /v1 and its envelope: a load balancer reads the status, a person the body.
 */
export function registerHealthRoutes(app: FastifyInstance, deps: GatewayDeps): void {
  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_request, reply) => {
    // Stopping (server.ready_grace_ms): the load balancer is told first, while requests are still served.
    if (deps.readiness.stopping) return reply.header('cache-control', 'no-store').code(503).send({ status: 'stopping', checks: {} });
    const { ready, checks } = await deps.readiness.report();
    reply.header('cache-control', 'no-store').code(ready ? 200 : 503);
    return { status: ready ? 'ready' : 'not_ready', checks };
  });
}
