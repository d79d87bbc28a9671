import fc from 'fast-check';
import type { RawRequest } from '../raw-http.ts';
import { chatBody, responsesBody } from './chat-bodies.ts';
import { quoteBody } from './fix-bodies.ts';
import { messagesBody } from './messages-bodies.ts';
import { field, identifier, models, shortText, wrongValue } from './values.ts';

/**
 * Whole requests for the fuzzer, described abstractly (which key, which known id) and turned
 * into bytes at send time, so ids created by earlier requests (receipts, quotes, runs) are reused.
 */

/** The credentials a request may present; `resolveRequest` maps each to a real value. */
export const KEY_KINDS = ['full', 'inference', 'fix', 'limited', 'revoked', 'expired', 'rateLimited', 'unknown'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];
export type Keys = Record<KeyKind, string>;

/** Ids seen so far, for path parameters and the quote of a run. */
export interface IdPools {
  receipt: string[];
  run: string[];
  quote: string[];
}

type IdPick = { known: keyof IdPools; index: number } | { text: string };
type AuthScheme =
  | 'bearer'
  | 'bearer-lower'
  | 'bearer-spaces'
  | 'x-api-key'
  | 'both-same'
  | 'both-different'
  | 'two-authorization'
  | 'two-x-api-key'
  | 'comma'
  | 'basic'
  | 'scheme-only'
  | 'empty'
  | 'none';
type BodyPlan =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'nested'; depth: number; where: 'top' | 'field' };

export interface FuzzCase {
  route: string;
  method: string;
  param: IdPick;
  pathVariant: string;
  query: string;
  auth: { scheme: AuthScheme; key: KeyKind | { text: string } };
  headers: Array<[string, string]>;
  body: BodyPlan;
}

interface Route {
  method: string;
  path: string;
  /** What :id names. */
  id?: keyof IdPools;
  body?: fc.Arbitrary<unknown>;
  queryKeys?: string[];
}

const runBody = fc.record(
  {
    quote: fc.oneof({ weight: 3, arbitrary: fc.nat().map((index) => ({ $quote: index })) }, { weight: 1, arbitrary: wrongValue }),
    stream: field(fc.boolean()),
  },
  { requiredKeys: [] },
);

/** Routes that need no key. */
export const PUBLIC_ROUTES = new Set(['/health', '/ready', '/metrics']);

/** Every route of src/app.ts, src/http/** and src/metrics that an API key reaches, and the public ones. */
export const API_ROUTES: Route[] = [
  { method: 'POST', path: '/v1/chat/completions', body: chatBody },
  { method: 'POST', path: '/v1/responses', body: responsesBody },
  { method: 'POST', path: '/v1/messages', body: messagesBody, queryKeys: ['beta'] },
  { method: 'POST', path: '/v1/messages/count_tokens', body: messagesBody, queryKeys: ['beta'] },
  { method: 'GET', path: '/v1/models', queryKeys: ['limit', 'after_id', 'before_id'] },
  { method: 'GET', path: '/v1/receipts', queryKeys: ['limit', 'before'] },
  { method: 'GET', path: '/v1/receipts/:id', id: 'receipt' },
  { method: 'GET', path: '/v1/balance' },
  { method: 'GET', path: '/v1/fix/agents' },
  { method: 'POST', path: '/v1/fix/quote', body: quoteBody },
  { method: 'POST', path: '/v1/fix/runs', body: runBody },
  { method: 'GET', path: '/v1/fix/runs/:id', id: 'run' },
  { method: 'GET', path: '/v1/fix/runs/:id/events', id: 'run', queryKeys: ['after'] },
  { method: 'POST', path: '/v1/fix/runs/:id/cancel', id: 'run' },
  { method: 'GET', path: '/health' },
  { method: 'GET', path: '/ready' },
  { method: 'GET', path: '/metrics' },
  { method: 'GET', path: '/v1/no-such-route' },
];

/** Characters node:http sends as they are in a request path (latin-1 included). */
const pathChar = fc.integer({ min: 0x21, max: 0xff }).map((code) => String.fromCharCode(code));
/** The same without DEL, which node:http refuses in a header value. */
const tokenChar = pathChar.filter((char) => char !== '\x7f');

function percentEncoded(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return escape(text); // lone surrogates: %uD800, which no URL decoder accepts either
  }
}

const idText = fc.oneof(
  fc.stringMatching(/^(rcpt|run|req|quote)_[a-z0-9]{0,30}$/),
  identifier,
  shortText.map(percentEncoded),
  fc.string({ unit: pathChar, maxLength: 20 }),
  fc.integer({ min: 99, max: 700 }).map((n) => 'a'.repeat(n)),
  fc.constantFrom('%', '%zz', '%00', '%2F', '..', '.', '%E0%A4%A', '%C0%AF', '%FF'),
);
const idPick = (pool: keyof IdPools): fc.Arbitrary<IdPick> =>
  fc.oneof({ weight: 3, arbitrary: fc.nat().map((index) => ({ known: pool, index })) }, { weight: 2, arbitrary: idText.map((text) => ({ text })) });

const queryValue = fc.oneof(
  fc.integer({ min: -5, max: 1200 }).map(String),
  fc.constantFrom('', '+', '%20', '1e2', '0x10', '20.5', 'true', 'null', '[]', '%', '%zz', '%00'),
  fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString()),
  fc.constantFrom(
    '2026-13-45T99:99:99Z',
    '2026-01-01',
    '0000-00-00',
    '+275760-09-13T00:00:00.000Z',
    '9999-12-31T23:59:59.999999999Z',
    '2026-01-01T00:00:00.123456789+05:30',
  ),
  models,
  shortText.map(percentEncoded),
  fc.string({ unit: pathChar, maxLength: 12 }),
);
const junkQuery = fc.constantFrom(
  '?',
  '?%',
  '?a=%zz',
  '?=&=',
  '?&&',
  '?limit',
  '?limit[]=1',
  '?limit[a]=1',
  '?__proto__[x]=1',
  '?constructor=1',
  '??',
  '?#',
);

function queryOf(keys: string[]): fc.Arbitrary<string> {
  const key = fc.oneof({ weight: 4, arbitrary: keys.length ? fc.constantFrom(...keys) : identifier }, { weight: 1, arbitrary: identifier });
  const pairs = fc
    .array(fc.tuple(key, queryValue), { maxLength: 4 })
    .map((list) => (list.length ? `?${list.map(([k, v]) => `${k}=${v}`).join('&')}` : ''));
  return fc.oneof({ weight: 6, arbitrary: pairs }, { weight: 1, arbitrary: junkQuery });
}

const pathVariant = fc.oneof(
  { weight: 12, arbitrary: fc.constant('exact') },
  { weight: 1, arbitrary: fc.constantFrom('trailing-slash', 'upper', 'double-slash', 'suffix', 'dot-segment', 'encoded-slash', 'nul') },
);

const authScheme: fc.Arbitrary<AuthScheme> = fc.oneof(
  { weight: 30, arbitrary: fc.constant<AuthScheme>('bearer') },
  {
    weight: 4,
    arbitrary: fc.constantFrom<AuthScheme>(
      'bearer-lower',
      'bearer-spaces',
      'x-api-key',
      'both-same',
      'both-different',
      'two-authorization',
      'two-x-api-key',
      'comma',
      'basic',
      'scheme-only',
      'empty',
      'none',
    ),
  },
);
const keyPick = fc.oneof(
  { weight: 30, arbitrary: fc.constant<KeyKind>('full') },
  { weight: 5, arbitrary: fc.constantFrom<KeyKind>(...KEY_KINDS) },
  {
    weight: 1,
    arbitrary: fc.oneof(fc.stringMatching(/^svc_[A-Za-z0-9_-]{0,60}$/), fc.string({ unit: tokenChar, maxLength: 30 })).map((text) => ({ text })),
  },
);

/** A header value node:http will send: tab, printable ASCII and latin-1. */
const headerValue = fc.string({
  unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(9)).map((code) => String.fromCharCode(code)),
  maxLength: 40,
});
const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'text/plain',
      'application/xml',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=utf-16',
      'APPLICATION/JSON',
      ';',
      'application/',
      '*/*',
      'application/json, text/plain',
      'application/vnd.api+json',
    ),
  },
  { weight: 1, arbitrary: headerValue },
);
/** Headers beside auth and content type; framing headers (host, content-length...) are the raw-bytes fuzzer's. */
const extraHeader: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(fc.constant('anthropic-version'), fc.oneof(fc.constant('2023-06-01'), headerValue)),
  fc.tuple(
    fc.constant('anthropic-beta'),
    fc.oneof(fc.constantFrom('prompt-caching-2024-07-31', 'a,b,,c', ',', 'interleaved-thinking-2025-05-14'), headerValue),
  ),
  fc.tuple(fc.constant('last-event-id'), fc.oneof(fc.integer({ min: -2, max: 50 }).map(String), headerValue)),
  fc.tuple(fc.constant('accept'), fc.constantFrom('text/event-stream', 'application/json', '*/*', '')),
  fc.tuple(fc.constant('content-encoding'), fc.constantFrom('gzip', 'br', 'identity', 'deflate, gzip', 'x')),
  fc.tuple(fc.constantFrom('x-request-id', 'user-agent', 'origin', 'cookie', 'x-csrf-token', 'x-svc-request-id', 'idempotency-key'), headerValue),
  fc.tuple(fc.stringMatching(/^x-[a-z0-9-]{1,20}$/), headerValue),
);

function bodyPlan(route: Route): fc.Arbitrary<BodyPlan> {
  const structured = route.body ?? wrongValue;
  const asText = structured.map((value) => JSON.stringify(value) ?? '');
  return fc.oneof(
    { weight: route.method === 'GET' ? 1 : 20, arbitrary: structured.map((value): BodyPlan => ({ kind: 'json', value })) },
    { weight: route.method === 'GET' ? 12 : 1, arbitrary: fc.constant<BodyPlan>({ kind: 'none' }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value): BodyPlan => ({ kind: 'json', value })) },
    {
      weight: 1,
      // Broken JSON: a valid body cut short, or with a character put in.
      arbitrary: fc
        .tuple(asText, fc.nat(), fc.option(fc.constantFrom('"', '{', ']', ',', '\\', '\u0000', 'é'), { nil: undefined }))
        .map(([text, at, insert]): BodyPlan => {
          const cut = text.length ? at % text.length : 0;
          return { kind: 'text', text: insert === undefined ? text.slice(0, cut) : text.slice(0, cut) + insert + text.slice(cut) };
        }),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes): BodyPlan => ({ kind: 'bytes', bytes })) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('nested' as const),
        depth: fc.integer({ min: 60, max: 70 }),
        where: fc.constantFrom('top' as const, 'field' as const),
      }),
    },
  );
}

function caseFor(route: Route): fc.Arbitrary<FuzzCase> {
  return fc.record({
    route: fc.constant(route.path),
    method: fc.oneof(
      { weight: 15, arbitrary: fc.constant(route.method) },
      { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD') },
    ),
    param: route.id ? idPick(route.id) : fc.constant({ text: '' }),
    pathVariant,
    query: fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 2, arbitrary: queryOf(route.queryKeys ?? []) }),
    auth: fc.record({ scheme: authScheme, key: keyPick }),
    headers: fc
      .tuple(
        fc.oneof(
          { weight: 8, arbitrary: contentType.map((value) => [value]) },
          { weight: 1, arbitrary: fc.constant([]) },
          { weight: 1, arbitrary: fc.array(contentType, { minLength: 2, maxLength: 2 }) },
        ),
        fc.array(extraHeader, { maxLength: 3 }),
      )
      .map(([types, extra]): Array<[string, string]> => [...types.map((value): [string, string] => ['content-type', value]), ...extra]),
    body: bodyPlan(route),
  });
}

/** Any request to any API route. */
export const apiCase: fc.Arbitrary<FuzzCase> = fc.oneof(...API_ROUTES.map((route) => ({ weight: route.body ? 3 : 1, arbitrary: caseFor(route) })));

function pick(pools: IdPools, id: IdPick): string {
  if ('text' in id) return id.text;
  const pool = pools[id.known];
  return pool.length ? pool[id.index % pool.length]! : `${id.known}_none_yet`;
}

function pathOf(route: string, id: string, variant: string): string {
  const path = route.replace(':id', id);
  switch (variant) {
    case 'trailing-slash':
      return `${path}/`;
    case 'upper':
      return path.toUpperCase();
    case 'double-slash':
      return path.replace('/', '//');
    case 'suffix':
      return `${path}/x`;
    case 'dot-segment':
      return path.replace(/^\/(\w+)\//, '/$1/./');
    case 'encoded-slash':
      return path.replace(/\/(?=[^/]*$)/, '%2F');
    case 'nul':
      return `${path}%00`;
    default:
      return path;
  }
}

function authHeaders(auth: FuzzCase['auth'], keys: Keys): Array<[string, string]> {
  const key = typeof auth.key === 'string' ? keys[auth.key] : auth.key.text;
  const other = key === keys.inference ? keys.full : keys.inference;
  switch (auth.scheme) {
    case 'bearer':
      return [['authorization', `Bearer ${key}`]];
    case 'bearer-lower':
      return [['authorization', `bearer ${key}`]];
    case 'bearer-spaces':
      return [['authorization', `Bearer \t ${key}  `]];
    case 'x-api-key':
      return [['x-api-key', key]];
    case 'both-same':
      return [
        ['authorization', `Bearer ${key}`],
        ['x-api-key', key],
      ];
    case 'both-different':
      return [
        ['authorization', `Bearer ${key}`],
        ['x-api-key', other],
      ];
    case 'two-authorization':
      return [
        ['authorization', `Bearer ${key}`],
        ['authorization', `Bearer ${other}`],
      ];
    case 'two-x-api-key':
      return [
        ['x-api-key', key],
        ['x-api-key', other],
      ];
    case 'comma':
      return [['authorization', `Bearer ${key}, Bearer ${other}`]];
    case 'basic':
      return [['authorization', `Basic ${Buffer.from(`user:${key}`).toString('base64')}`]];
    case 'scheme-only':
      return [['authorization', 'Bearer']];
    case 'empty':
      return [['authorization', '']];
    case 'none':
      return [];
  }
}

/** Whether a request's credentials are one live key, presented once: the only way to a 2xx on an API route. */
export function presentsOneLiveKey(auth: FuzzCase['auth']): boolean {
  const once: AuthScheme[] = ['bearer', 'bearer-lower', 'bearer-spaces', 'x-api-key', 'both-same'];
  const live: KeyKind[] = ['full', 'inference', 'fix', 'limited', 'rateLimited'];
  return once.includes(auth.scheme) && typeof auth.key === 'string' && live.includes(auth.key);
}

/** `depth` nested arrays, as text: the parser's depth limit is 64. */
const nested = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

function bodyBytes(plan: BodyPlan, pools: IdPools): string | Uint8Array | undefined {
  switch (plan.kind) {
    case 'none':
      return undefined;
    case 'text':
      return plan.text;
    case 'bytes':
      return plan.bytes;
    case 'nested':
      return plan.where === 'top'
        ? nested(plan.depth)
        : `{"model":"up/alpha","messages":[{"role":"user","content":"hi"}],"metadata":${nested(plan.depth)}}`;
    case 'json':
      return (
        JSON.stringify(plan.value, (_key, value) =>
          value && typeof value === 'object' && '$quote' in value ? pick(pools, { known: 'quote', index: value.$quote }) : value,
        ) ?? ''
      );
  }
}

/** The bytes of a case, with today's keys and ids. */
export function resolveRequest(fuzzCase: FuzzCase, keys: Keys, pools: IdPools): RawRequest {
  return {
    method: fuzzCase.method,
    path: pathOf(fuzzCase.route, pick(pools, fuzzCase.param), fuzzCase.pathVariant) + fuzzCase.query,
    headers: [...authHeaders(fuzzCase.auth, keys), ...fuzzCase.headers],
    body: bodyBytes(fuzzCase.body, pools),
  };
}
