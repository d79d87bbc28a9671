import type { FastifyInstance } from 'fastify';
import { chatHandler } from './chat-pipeline.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { openAIChatWire } from '../../formats/openai-chat/openai-chat-wire.ts';

/** POST /v1/chat/completions, in its metered /v1 scope (v1-api.ts). */
export function registerChatCompletionsRoute(scope: FastifyInstance, deps: GatewayDeps): void {
  scope.post('/chat/completions', { config: { wire: 'openai' } }, chatHandler(deps, openAIChatWire));
}
