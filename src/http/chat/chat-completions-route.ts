import type { FastifyInstance } from 'fastify';
import { serveChat } from './chat-pipeline.ts';
import type { GatewayDeps } from '../gateway-deps.ts';
import { openAIChatWire } from '../../formats/openai-chat/openai-chat-wire.ts';

export function registerChatCompletionsRoute(app: FastifyInstance, deps: GatewayDeps): void {
  app.post('/v1/chat/completions', { config: { wire: 'openai', billable: 'chat.completions' } }, (request, reply) =>
    serveChat(deps, openAIChatWire, request, reply),
  );
}
