import type { FastifyInstance } from 'fastify';
import type { GatewayDeps } from '../gateway-deps.ts';
import { loadAddressTools } from '../../auth/address-tools.ts';
import { guardConsole } from './console-guard.ts';
import { registerKeysRoutes } from './console-keys-routes.ts';
import { registerMembersRoutes } from './console-members-routes.ts';
import { registerReportsRoutes } from './console-reports-routes.ts';
import { registerRulesRoutes } from './console-rules-routes.ts';
import { registerSignInRoutes } from './console-sign-in-routes.ts';
import { registerUsageRoutes } from './console-usage-routes.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Console routes reachable before sign-in (nonce, sign-in). */
    signIn?: boolean;
  }
}

/** The console API under /console/api: session cookie only, never API keys; see console-guard.ts. */
export function registerConsoleApi(app: FastifyInstance, deps: GatewayDeps): void {
  app.register(
    async (scope) => {
      scope.decorateRequest('signedIn', null);
      scope.addHook('onRequest', async (request, reply) => {
        await loadAddressTools();
        await guardConsole(deps, request, reply, request.routeOptions.config?.signIn === true);
      });
      registerSignInRoutes(scope, deps);
      registerKeysRoutes(scope, deps);
      registerReportsRoutes(scope, deps);
      registerUsageRoutes(scope, deps);
      registerRulesRoutes(scope, deps);
      registerMembersRoutes(scope, deps);
    },
    { prefix: '/console/api' },
  );
}
