import type { FastifyInstance } from 'fastify';
import { chatHandler } from './chat-pipeline.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { responsesWire } from '../../formats/openai-responses/responses-wire.ts';

/** POST /v1/responses, in its metered /v1 scope (v1-api.ts). */
export function registerResponsesRoute(scope: FastifyInstance, deps: GatewayDeps): void {
  scope.post('/responses', { config: { wire: 'openai' } }, chatHandler(deps, responsesWire));
}
