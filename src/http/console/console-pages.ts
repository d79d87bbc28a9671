import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.ts';
import { packageRoot } from '../../lib/package-root.ts';
import { pathInMessage } from '../error-handling.ts';
import { CONSOLE_HEADERS } from './console-guard.ts';

/** Where `npm run build:console` (run by npm ci and npm run build) writes the pages; found from the sources and from the compiled build. */
const BUILT = join(packageRoot(import.meta.url), 'dist', 'console') + '/';

/**
 * Scripts and styles from this origin only; wallet icons are data: URIs (EIP-6963); the pages
 * talk to their own API; nothing may frame them.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/** The console's pages: /login and /console/* get the app's one HTML page; hashed assets are cached for a year. */
export function registerConsolePages(app: FastifyInstance): void {
  let html: Promise<string> | null = null;

  const sendPage = async (reply: FastifyReply) => {
    html ??= readFile(join(BUILT, 'index.html'), 'utf8').catch((error) => {
      html = null;
      throw error;
    });
    let body: string;
    try {
      body = await html;
    } catch {
      reply.code(503).headers(CONSOLE_HEADERS).type('text/plain; charset=utf-8');
      return 'The console pages are not built yet: run `npm run build:console` (npm ci and npm run build do it), then reload.';
    }
    return reply
      .headers({ ...CONSOLE_HEADERS, 'content-security-policy': CONSOLE_CSP })
      .type('text/html; charset=utf-8')
      .send(body);
  };

  app.get('/login', async (_request, reply) => sendPage(reply));
  app.get('/console', async (_request, reply) => sendPage(reply));
  app.get('/console/*', async (request, reply) => {
    const path = (request.params as { '*': string })['*'];
    if (path.startsWith('api/')) throw new GatewayError('not_found', `No route GET ${pathInMessage(request.url)}.`);
    if (!path.startsWith('assets/')) return sendPage(reply);
    const name = path.slice('assets/'.length);
    const type = TYPES[name.slice(name.lastIndexOf('.'))];
    if (!type || !/^app-[0-9a-f]{12}\.(js|css)$/.test(name)) throw new GatewayError('not_found', `No console asset ${name}.`);
    let body: Buffer;
    try {
      body = await readFile(join(BUILT, 'assets', name));
    } catch {
      throw new GatewayError('not_found', `No console asset ${name}.`);
    }
    // The name carries the content's hash: it never changes, so browsers may keep it for a year.
    return reply
      .headers({ ...CONSOLE_HEADERS, 'cache-control': 'public, max-age=31536000, immutable', 'content-security-policy': CONSOLE_CSP })
      .type(type)
      .send(body);
  });
}
