import type { FastifyInstance } from 'fastify';
import { serveChat } from './chat-pipeline.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { responsesWire } from '../../formats/openai-responses/responses-wire.ts';

export function registerResponsesRoute(app: FastifyInstance, deps: GatewayDeps): void {
  app.post('/v1/responses', { config: { wire: 'openai', billable: 'responses' } }, (request, reply) =>
    serveChat(deps, responsesWire, request, reply),
  );
}
