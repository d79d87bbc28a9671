import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { privateKeyToAccount } from 'viem/accounts';
import { consoleClient, type Session } from './helpers/console-client.ts';
import { envelopeProblem } from './helpers/contract-envelope.ts';
import { field, identifier, models, shortText, wrongValue } from './helpers/fuzz/values.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';
import { sendHttp, type RawRequest } from './helpers/raw-http.ts';

/**
 * Property-based fuzz of the console API (/console/api, session cookie and CSRF token) and the
 * console pages, over real HTTP: no 500, every error the envelope, no 2xx without a session.
 * FUZZ_SEED and FUZZ_RUNS as for test/fuzz-endpoints.test.ts.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 1313);
const RUNS = Math.max(100, Math.round(Number(process.env.FUZZ_RUNS ?? 600) / 2));

const owner = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

type Ids = { key: string[]; receipt: string[] };
type Access = 'session' | 'no-csrf' | 'wrong-csrf' | 'no-cookie' | 'forged-cookie' | 'wrong-origin' | 'api-key';

interface ConsoleCase {
  method: string;
  path: string;
  id: { known: keyof Ids; index: number } | { text: string } | null;
  query: string;
  access: Access;
  body: unknown;
  rawBody: string | null;
}

const usd = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('1', '0.5', '12.50', '0.000000001') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('0', '-1', '1e3', ' 1 ', '0.0000000001', '99999999999999999', '9007199.254740991', '9007199.254740992', ''),
  },
);
const address = fc.oneof(fc.stringMatching(/^0x[0-9a-fA-F]{40}$/), fc.constantFrom(owner.address, owner.address.toLowerCase(), '0x0', '0xZZ', ''));
const instant = fc.oneof(
  fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString()),
  fc.constantFrom('2026-13-45T00:00:00Z', 'yesterday', '2026-01-01T00:00:00.123456789Z'),
);
const queryValue = fc.oneof(
  fc.integer({ min: -2, max: 300 }).map(String),
  fc.constantFrom(
    '24h',
    '7d',
    '30d',
    '90d',
    'hour',
    'day',
    'succeeded',
    'failed',
    'cancelled',
    'chat.completions',
    'csv',
    'json',
    'account',
    'key',
    'model',
    'x',
  ),
  instant.map(encodeURIComponent),
  shortText.map((text) => {
    try {
      return encodeURIComponent(text);
    } catch {
      return 'x';
    }
  }),
);
const query = (keys: string[]) =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constant('') },
    {
      weight: 3,
      arbitrary: fc
        .array(fc.tuple(fc.oneof(fc.constantFrom(...keys), identifier), queryValue), { maxLength: 3 })
        .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}` : '')),
    },
  );

interface ConsoleRoute {
  method: string;
  path: string;
  id?: keyof Ids | 'address' | 'page';
  queryKeys?: string[];
  body?: fc.Arbitrary<unknown>;
  /** Ends the session it is sent with: sent only without a live one. */
  endsSession?: boolean;
}

const ROUTES: ConsoleRoute[] = [
  {
    method: 'POST',
    path: '/console/api/sign-in/nonce',
    body: fc.record({ address: field(address), chain_id: field(fc.integer({ min: -1, max: 10 })) }, { requiredKeys: [] }),
  },
  {
    method: 'POST',
    path: '/console/api/sign-in',
    body: fc.record({ message: field(shortText), signature: field(fc.constantFrom('0x', '0x00', `0x${'ab'.repeat(65)}`)) }, { requiredKeys: [] }),
  },
  { method: 'GET', path: '/console/api/session' },
  { method: 'POST', path: '/console/api/sign-out', endsSession: true },
  { method: 'POST', path: '/console/api/sign-out-everywhere', endsSession: true },
  { method: 'GET', path: '/console/api/overview', queryKeys: ['range', 'from', 'to', 'bucket'] },
  {
    method: 'GET',
    path: '/console/api/receipts',
    queryKeys: ['key', 'model', 'alias', 'status', 'error_code', 'endpoint', 'from', 'to', 'limit', 'cursor'],
  },
  { method: 'GET', path: '/console/api/receipts/export', queryKeys: ['key', 'model', 'alias', 'status', 'error_code', 'from', 'to', 'format'] },
  { method: 'GET', path: '/console/api/usage', queryKeys: ['range', 'from', 'to', 'bucket', 'by', 'key', 'model'] },
  { method: 'GET', path: '/console/api/alerts' },
  {
    method: 'PUT',
    path: '/console/api/limits/alerts',
    body: fc.record(
      { balance_below: field(fc.option(usd)), budget_share: field(fc.option(fc.integer({ min: -5, max: 2_000 }))) },
      { requiredKeys: [] },
    ),
  },
  { method: 'GET', path: '/console/api/sign-in/options' },
  { method: 'GET', path: '/console/api/receipts/:id', id: 'receipt' },
  { method: 'GET', path: '/console/api/balance', queryKeys: ['limit', 'before'] },
  {
    method: 'POST',
    path: '/console/api/balance/funds',
    body: fc.record({ amount: field(usd), note: field(fc.option(shortText)) }, { requiredKeys: [] }),
  },
  { method: 'GET', path: '/console/api/audit', queryKeys: ['limit', 'before', 'actor', 'action'] },
  { method: 'GET', path: '/console/api/keys' },
  {
    method: 'POST',
    path: '/console/api/keys',
    body: fc.record(
      {
        name: field(shortText),
        scopes: field(fc.array(fc.constantFrom('inference', 'fix', 'admin'), { maxLength: 3 })),
        models: field(fc.option(fc.array(fc.oneof(models, identifier), { maxLength: 3 }))),
        daily_limit: field(fc.option(usd)),
        rate_limit_per_minute: field(fc.option(fc.integer({ min: -1, max: 2_000_000 }))),
        expires_at: field(fc.option(instant)),
      },
      { requiredKeys: [] },
    ),
  },
  { method: 'POST', path: '/console/api/keys/:id/revoke', id: 'key' },
  {
    method: 'PATCH',
    path: '/console/api/keys/:id',
    id: 'key',
    body: fc.record(
      {
        name: field(shortText),
        models: field(fc.option(fc.array(fc.oneof(models, identifier), { maxLength: 3 }))),
        daily_limit: field(fc.option(usd)),
        rate_limit_per_minute: field(fc.option(fc.integer({ min: -1, max: 2_000_000 }))),
      },
      { requiredKeys: [] },
    ),
  },
  { method: 'GET', path: '/console/api/limits' },
  { method: 'PUT', path: '/console/api/limits/monthly-budget', body: fc.record({ monthly_budget: field(fc.option(usd)) }, { requiredKeys: [] }) },
  { method: 'GET', path: '/console/api/members' },
  { method: 'POST', path: '/console/api/members', body: fc.record({ address: field(address) }, { requiredKeys: [] }) },
  { method: 'DELETE', path: '/console/api/members/:id', id: 'address' },
  { method: 'GET', path: '/console/api/rules' },
  {
    method: 'PUT',
    path: '/console/api/rules',
    body: fc.record(
      {
        alias: field(fc.oneof(fc.constantFrom('svc/fast', 'svc/balanced', 'svc/best', 'svc/new', 'up/alpha'), identifier)),
        candidates: field(fc.array(fc.oneof(models, identifier), { maxLength: 4 })),
        reasoning: field(fc.constantFrom('low', 'medium', 'xhigh', 'high')),
      },
      { requiredKeys: [] },
    ),
  },
  { method: 'GET', path: '/console/api/no-such-route' },
  { method: 'GET', path: '/login' },
  { method: 'GET', path: '/console/:id', id: 'page' },
];

const pathText = fc.oneof(identifier, fc.constantFrom('%', '%zz', '..', 'api/keys', 'assets/app-000000000000.js', 'assets/x.css', 'a'.repeat(300)));

function caseOf(route: ConsoleRoute): fc.Arbitrary<ConsoleCase> {
  const id =
    route.id === 'key' || route.id === 'receipt'
      ? fc.oneof(
          fc.nat().map((index) => ({ known: route.id as keyof Ids, index })),
          pathText.map((text) => ({ text })),
        )
      : route.id === 'address'
        ? address.map((text) => ({ text: text || 'x' }))
        : route.id === 'page'
          ? pathText.map((text) => ({ text }))
          : fc.constant(null);
  const access: fc.Arbitrary<Access> = route.endsSession
    ? fc.constantFrom<Access>('no-cookie', 'forged-cookie', 'api-key', 'no-csrf')
    : fc.oneof(
        { weight: 8, arbitrary: fc.constant<Access>('session') },
        { weight: 1, arbitrary: fc.constantFrom<Access>('no-csrf', 'wrong-csrf', 'no-cookie', 'forged-cookie', 'wrong-origin', 'api-key') },
      );
  return fc.record({
    method: fc.oneof(
      { weight: 12, arbitrary: fc.constant(route.method) },
      { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE') },
    ),
    path: fc.constant(route.path),
    id,
    query: query(route.queryKeys ?? ['limit']),
    access,
    body: route.body ? fc.oneof({ weight: 6, arbitrary: route.body }, { weight: 1, arbitrary: wrongValue }) : fc.constant(undefined),
    rawBody: fc.oneof({ weight: 12, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom('', '{', 'null', '[]', '{"a":') }),
  });
}

const consoleCase = fc.oneof(...ROUTES.map(caseOf));

describe('fuzz: the console API and pages', () => {
  let harness: Harness;
  let session: Session;
  const ids: Ids = { key: [], receipt: [] };
  const tally = new Map<string, number>();

  before(async () => {
    harness = await startHarness();
    session = await consoleClient(harness.gateway.url).signIn(owner);
    const store = harness.gateway.deps.store;
    for (let index = 0; index < 3; index++) ids.key.push((await harness.createKey({ name: `fuzz ${index}` })).record.id);
    await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] });
    ids.receipt.push(...(await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 5 })).data.map((receipt) => receipt.id));
  });
  after(async () => {
    const lines = [...tally].sort(([a], [b]) => a.localeCompare(b)).map(([key, count]) => `${key}: ${count}`);
    console.log(`console fuzz seed ${SEED}, ${RUNS} runs\n${lines.join('\n')}`);
    await harness?.close();
  });

  function requestOf(fuzzCase: ConsoleCase): RawRequest {
    const id =
      fuzzCase.id === null
        ? ''
        : 'text' in fuzzCase.id
          ? fuzzCase.id.text
          : (ids[fuzzCase.id.known][fuzzCase.id.index % Math.max(1, ids[fuzzCase.id.known].length)] ?? 'none');
    const origin = harness.gateway.url;
    const headers: Array<[string, string]> = [];
    if (fuzzCase.access !== 'wrong-origin') headers.push(['origin', origin]);
    else headers.push(['origin', 'http://evil.example']);
    if (fuzzCase.access === 'forged-cookie') headers.push(['cookie', 'svc_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']);
    else if (fuzzCase.access !== 'no-cookie') headers.push(['cookie', session.cookie]);
    if (fuzzCase.access === 'wrong-csrf') headers.push(['x-csrf-token', 'x'.repeat(session.csrf.length)]);
    else if (fuzzCase.access !== 'no-csrf') headers.push(['x-csrf-token', session.csrf]);
    if (fuzzCase.access === 'api-key') headers.push(['authorization', `Bearer ${harness.key}`]);
    const body = fuzzCase.rawBody ?? (fuzzCase.body === undefined ? undefined : JSON.stringify(fuzzCase.body));
    if (body !== undefined) headers.push(['content-type', 'application/json']);
    return { method: fuzzCase.method, path: fuzzCase.path.replace(':id', id) + fuzzCase.query, headers, body };
  }

  async function check(fuzzCase: ConsoleCase): Promise<void> {
    const raw = requestOf(fuzzCase);
    const response = await sendHttp(harness.gateway.url, raw);
    const problems: string[] = [];
    const route = `${fuzzCase.method} ${fuzzCase.path} ${response.status}`;
    tally.set(route, (tally.get(route) ?? 0) + 1);
    if (response.status === 500) problems.push('status 500');
    // The pages are HTML for people (a plain-text 503 says when they are not built); the API owes the envelope.
    if (response.status >= 400 && fuzzCase.path.startsWith('/console/api/')) {
      const problem = envelopeProblem(response, { consoleRoute: true });
      if (problem) problems.push(`not the contract's envelope: ${problem}`);
    }
    const signInRoute = fuzzCase.path.startsWith('/console/api/sign-in');
    // Reads need the cookie alone; changes also the CSRF token and the console's origin.
    const withSession =
      fuzzCase.access === 'session' || (raw.method === 'GET' && ['no-csrf', 'wrong-csrf', 'wrong-origin'].includes(fuzzCase.access));
    if (response.status < 300 && fuzzCase.path.startsWith('/console/api/') && !signInRoute && !withSession) {
      problems.push(`answered ${response.status} without a session and its CSRF token (${fuzzCase.access})`);
    }
    if (problems.length) {
      throw new Error(
        `${problems.join('\n')}\n--- request\n${raw.method} ${raw.path}\n${JSON.stringify(raw.headers)}\n${String(raw.body).slice(0, 800)}\n--- response ${response.status}\n${response.body.slice(0, 800)}`,
      );
    }
    if (fuzzCase.path === '/console/api/keys' && response.status === 200 && raw.method === 'POST') ids.key.push(JSON.parse(response.body).record.id);
  }

  test(`${RUNS} console requests: no 500, only envelopes, nothing without a session (seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(consoleCase, (fuzzCase) => check(fuzzCase)),
      { seed: SEED, numRuns: RUNS, includeErrorInReport: true },
    );
  });
});
