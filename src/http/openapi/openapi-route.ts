import type { FastifyInstance } from 'fastify';
import packageJson from '../../../package.json' with { type: 'json' };

/**
 * GET /v1/openapi.json, without a key: registered outside the /v1 key scopes (v1-api.ts), as
 * client generators fetch it before they have one, and it holds nothing secret (no models, prices
 * or accounts; the same for every gateway of this version).
 * Built on the first request (a few hundred milliseconds), never at start.
 */
export function registerOpenApiRoute(app: FastifyInstance): void {
  let document: Promise<string> | undefined;
  app.get('/v1/openapi.json', async (_request, reply) => {
    document ??= import('./openapi-document.ts')
      .then(({ buildOpenApiDocument }) => JSON.stringify(buildOpenApiDocument(packageJson.version)))
      .catch((error: unknown) => {
        document = undefined;
        throw error;
      });
    reply.header('content-type', 'application/json; charset=utf-8').header('cache-control', 'public, max-age=300');
    return document;
  });
}
