import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { SIGN_IN_STATEMENT } from '../src/auth/siwe/sign-in-message.ts';
import { parseUsd } from '../src/lib/money.ts';
import { consoleClient, json } from './helpers/console-client.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

const owner = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const member = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a');
const stranger = privateKeyToAccount('0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6');

describe('console sign-in over HTTP with real signatures', () => {
  let harness: Harness;
  let client: ReturnType<typeof consoleClient>;
  let offsetMs = 0;
  before(async () => {
    harness = await startHarness({ now: () => Date.now() + offsetMs });
    client = consoleClient(harness.gateway.url);
  });
  after(() => harness.close());

  test('the message has the contract lines in order; the first address becomes the owner; the cookie is httpOnly', async () => {
    const { message, nonce } = await client.nonce(owner.address.toLowerCase());
    const domain = new URL(harness.gateway.url).host;
    const lines = message.split('\n');
    assert.equal(lines[0], `${domain} wants you to sign in with your Ethereum account:`);
    assert.equal(lines[1], owner.address, 'checksummed');
    assert.equal(lines[3], SIGN_IN_STATEMENT);
    assert.match(SIGN_IN_STATEMENT, /no blockchain transaction/);
    assert.match(SIGN_IN_STATEMENT, /no gas/);
    assert.deepEqual(lines.slice(5, 9), [`URI: ${harness.gateway.url}`, 'Version: 1', 'Chain ID: 1', `Nonce: ${nonce}`]);
    const issuedAt = Date.parse(lines[9]!.replace('Issued At: ', ''));
    const expiresAt = Date.parse(lines[10]!.replace('Expiration Time: ', ''));
    assert.equal(expiresAt - issuedAt, 10 * 60_000);

    const response = await client.signInWith(message, await owner.signMessage({ message }));
    assert.equal(response.status, 200);
    const body = await json(response);
    assert.deepEqual([body.address, body.role], [owner.address, 'owner']);
    const cookie = response.headers.getSetCookie()[0]!;
    assert.match(cookie, /^svc_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/, 'no Secure on plain-http loopback');
    assert.equal(response.headers.get('x-frame-options'), 'DENY');
    assert.match(response.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);

    const session = { cookie: cookie.split(';')[0]!, csrf: body.csrf_token, address: body.address, role: body.role };
    const me = await json(await client.call('GET', '/session', { session }));
    assert.deepEqual([me.address, me.role], [owner.address, 'owner']);
  });

  test('refusals: every field the server checks, and replays', async () => {
    const domain = new URL(harness.gateway.url).host;
    const port = Number(new URL(harness.gateway.url).port);
    const refused = async (name: string, build: (nonce: string, issuedAt: Date) => string, reason: string, signer: PrivateKeyAccount = owner) => {
      const { nonce } = await client.nonce(owner.address);
      const message = build(nonce, new Date(Date.now() + offsetMs));
      const response = await client.signInWith(message, await signer.signMessage({ message }));
      const body = await json(response);
      assert.deepEqual([response.status, body.error.code, body.error.param], [401, 'sign_in_refused', reason], `${name}: ${JSON.stringify(body)}`);
      assert.ok(body.error.message.length > 10, `${name}: a sentence`);
    };
    const base = (nonce: string, issuedAt: Date, changes: Partial<Parameters<typeof createSiweMessage>[0]> = {}) =>
      createSiweMessage({
        domain,
        address: owner.address,
        statement: SIGN_IN_STATEMENT,
        uri: harness.gateway.url,
        version: '1',
        chainId: 1,
        nonce,
        issuedAt,
        expirationTime: new Date(issuedAt.getTime() + 10 * 60_000),
        ...changes,
      });
    await refused('wrong domain', (nonce, at) => base(nonce, at, { domain: 'evil.example' }), 'wrong_domain');
    await refused('wrong port', (nonce, at) => base(nonce, at, { domain: `127.0.0.1:${port + 1}` }), 'wrong_domain');
    await refused('wrong URI', (nonce, at) => base(nonce, at, { uri: 'https://evil.example' }), 'wrong_uri');
    await refused('wrong chain', (nonce, at) => base(nonce, at, { chainId: 5 }), 'wrong_chain');
    await refused('expired', (nonce, at) => base(nonce, new Date(at.getTime() - 11 * 60_000)), 'expired');
    await refused('valid too long', (nonce, at) => base(nonce, at, { expirationTime: new Date(at.getTime() + 60 * 60_000) }), 'too_long');
    await refused('issued in the future', (nonce, at) => base(nonce, new Date(at.getTime() + 5 * 60_000)), 'issued_in_future');
    await refused('unknown nonce', (_nonce, at) => base('neverIssued12345678', at), 'unknown_nonce');
    await refused('wrong signer', (nonce, at) => base(nonce, at), 'bad_signature', stranger);

    // A tampered message: signed, then one character of the statement changed.
    const { message, nonce } = await client.nonce(owner.address);
    const signature = await owner.signMessage({ message });
    const tampered = await json(await client.signInWith(message.replace('costs no gas', 'costs no fee'), signature));
    assert.equal(tampered.error.code, 'sign_in_refused');
    // The nonce was used by the tampered attempt: the genuine message is a replay now.
    const replay = await json(await client.signInWith(message, signature));
    assert.deepEqual([replay.error.code, replay.error.param], ['sign_in_refused', 'unknown_nonce']);
    assert.ok(nonce);

    // A spoofed Host header changes nothing: the message names the configured domain.
    const spoofed = await fetch(`${harness.gateway.url}/console/api/sign-in/nonce`, {
      method: 'POST',
      headers: { host: 'evil.example', origin: harness.gateway.url, 'content-type': 'application/json' },
      body: JSON.stringify({ address: owner.address }),
    });
    assert.match((await json(spoofed)).message, new RegExp(`^${domain.replace('.', '\\.')} wants you`));
  });

  test('a second address is refused until the owner adds it; members cannot manage members', async () => {
    const ownerSession = await client.signIn(owner);
    const { message } = await client.nonce(member.address);
    const refused = await client.signInWith(message, await member.signMessage({ message }));
    assert.deepEqual([refused.status, (await json(refused)).error.code], [403, 'not_a_member']);

    const added = await client.call('POST', '/members', { body: { address: member.address.toLowerCase() }, session: ownerSession });
    assert.deepEqual((await json(added)).address, member.address);
    const memberSession = await client.signIn(member);
    assert.equal(memberSession.role, 'member');
    const denied = await client.call('POST', '/members', { body: { address: stranger.address }, session: memberSession });
    assert.deepEqual([denied.status, (await json(denied)).error.code], [403, 'owner_only']);

    // Removing a member ends its sessions at once.
    assert.equal((await client.call('DELETE', `/members/${member.address}`, { session: ownerSession })).status, 200);
    assert.equal((await client.call('GET', '/session', { session: memberSession })).status, 401);
  });

  test('reports: bad filters name their field; the export streams a download; sign-in options list the chains', async () => {
    const session = await client.signIn(owner);
    const refused = async (path: string) => {
      const response = await client.call('GET', path, { session });
      const body = await json(response);
      return [response.status, body.error.code, body.error.param];
    };
    assert.deepEqual(await refused('/receipts?key=svc_nothing1'), [400, 'invalid_request', 'key']);
    assert.deepEqual(await refused('/receipts/export?format=xml'), [400, 'invalid_request', 'format']);
    assert.deepEqual(await refused('/usage?range=90d&bucket=hour'), [400, 'invalid_request', 'bucket']);
    assert.deepEqual(await refused('/usage?by=day'), [400, 'invalid_request', 'by']);
    assert.deepEqual(await refused('/audit?limit=0'), [400, 'invalid_request', 'limit']);
    const download = await client.call('GET', '/receipts/export', { session });
    assert.equal(download.status, 200);
    assert.match(download.headers.get('content-type') ?? '', /^text\/csv/);
    assert.match(download.headers.get('content-disposition') ?? '', /^attachment; filename="receipts-.+\.csv"$/);
    assert.match(await download.text(), /^id,request_id,created_at,/);
    const options = await fetch(`${harness.gateway.url}/console/api/sign-in/options`);
    assert.deepEqual(await json(options), { chain_ids: [1] });
  });

  test('separation: API keys refused on the console, cookies ignored on /v1, cross-origin and token-less changes refused', async () => {
    const session = await client.signIn(owner);
    const withKey = await fetch(`${harness.gateway.url}/console/api/session`, {
      headers: { authorization: `Bearer ${harness.key}`, cookie: session.cookie },
    });
    assert.deepEqual([withKey.status, (await json(withKey)).error.code], [401, 'session_required']);
    const v1 = await fetch(`${harness.gateway.url}/v1/models`, { headers: { cookie: session.cookie } });
    assert.deepEqual([v1.status, (await json(v1)).error.code], [401, 'invalid_api_key']);

    const crossOrigin = await client.call('POST', '/keys', { body: { name: 'x' }, session, headers: { origin: 'https://evil.example' } });
    assert.deepEqual([crossOrigin.status, (await json(crossOrigin)).error.code], [403, 'csrf_failed']);
    const noToken = await client.call('POST', '/keys', { body: { name: 'x' }, session: { ...session, csrf: 'wrong' } });
    assert.deepEqual([noToken.status, (await json(noToken)).error.code], [403, 'csrf_failed']);
    const noCookie = await client.call('GET', '/keys');
    assert.deepEqual([noCookie.status, (await json(noCookie)).error.code], [401, 'session_required']);

    // Signed out: the same cookie no longer works.
    assert.equal((await client.call('POST', '/sign-out', { session })).status, 200);
    assert.equal((await client.call('GET', '/session', { session })).status, 401);
    // Expired after 7 days.
    const later = await client.signIn(owner);
    offsetMs = 7 * 24 * 60 * 60_000 + 1_000;
    try {
      assert.equal((await client.call('GET', '/session', { session: later })).status, 401);
    } finally {
      offsetMs = 0;
    }
  });

  test('keys: created with the full value once, listed, limits edited, revoked at once for /v1; all audit-logged', async () => {
    const session = await client.signIn(owner);
    const created = await json(
      await client.call('POST', '/keys', {
        body: { name: 'laptop', scopes: ['inference'], models: ['svc/fast'], daily_limit: '2.50', rate_limit_per_minute: 30 },
        session,
      }),
    );
    assert.match(created.key, /^svc_/);
    assert.deepEqual([created.record.daily_limit, created.record.rate_limit_per_minute, created.record.status], ['2.500000000', 30, 'active']);
    const chat = await harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] }, created.key);
    assert.equal(chat.status, 200);

    const listed = await json(await client.call('GET', '/keys', { session }));
    const entry = listed.data.find((key: { id: string }) => key.id === created.record.id);
    assert.ok(entry && !('key' in entry) && parseUsd(entry.spent_today) > 0, JSON.stringify(entry));

    const patched = await json(await client.call('PATCH', `/keys/${created.record.id}`, { body: { daily_limit: null }, session }));
    assert.deepEqual([patched.daily_limit, patched.rate_limit_per_minute], [null, 30]);

    assert.equal((await client.call('POST', `/keys/${created.record.id}/revoke`, { session })).status, 200);
    const after = await harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] }, created.key);
    assert.equal((await json(after)).error.code, 'key_revoked');

    const audit = await json(await client.call('GET', '/audit?limit=20', { session }));
    const actions = audit.data.filter((row: { actor: string }) => row.actor === owner.address).map((row: { action: string }) => row.action);
    for (const action of ['key.created', 'key.limits', 'key.revoked', 'session.signed_in'])
      assert.ok(actions.includes(action), `${action} in ${actions}`);
  });

  test('budget, funds, overview and receipts with filters and a cursor', async () => {
    const session = await client.signIn(owner);
    assert.equal((await client.call('PUT', '/limits/monthly-budget', { body: { monthly_budget: '500' }, session })).status, 200);
    const funded = await json(await client.call('POST', '/balance/funds', { body: { amount: '12.5', note: 'invoice 7' }, session }));
    assert.ok(parseUsd(funded.balance) > 0);
    for (let index = 0; index < 5; index++) {
      await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: `hi ${index}` }] });
    }
    const overview = await json(await client.call('GET', '/overview?range=24h', { session }));
    assert.equal(overview.month.budget, '500.000000000');
    assert.equal(overview.range.bucket, 'hour');
    assert.ok(overview.series.length >= 1 && overview.series.every((bucket: { cost: string }) => /^\d+\.\d{9}$/.test(bucket.cost)));
    assert.ok(overview.by_model.some((row: { name: string; requests: number }) => row.name === 'up/alpha' && row.requests >= 5));

    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await json(await client.call('GET', `/receipts?model=up/alpha&limit=2${cursor ? `&cursor=${cursor}` : ''}`, { session }));
      pages.push(...page.data.map((receipt: { id: string; model: string }) => receipt.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.ok(pages.length >= 5);
    assert.equal(new Set(pages).size, pages.length, 'no receipt twice');

    const balance = await json(await client.call('GET', '/balance', { session }));
    assert.equal(balance.funds[0].note, 'invoice 7');
    assert.equal(balance.funds[0].amount, '12.500000000');
  });

  test('rules: a change reorders the alias at once; invalid rules are refused', async () => {
    const session = await client.signIn(owner);
    const bad = await client.call('PUT', '/rules', { body: { alias: 'svc/fast', candidates: ['nope/model'], reasoning: 'low' }, session });
    assert.deepEqual([bad.status, (await json(bad)).error.code], [400, 'invalid_request']);
    const rules = await json(
      await client.call('PUT', '/rules', { body: { alias: 'svc/fast', candidates: ['up/beta', 'up/alpha'], reasoning: 'medium' }, session }),
    );
    assert.deepEqual(
      rules.aliases.find((alias: { alias: string }) => alias.alias === 'svc/fast'),
      {
        alias: 'svc/fast',
        candidates: ['up/beta', 'up/alpha'],
        health: { 'up/beta': { state: 'up', until: null, reason: null }, 'up/alpha': { state: 'up', until: null, reason: null } },
        reasoning: 'medium',
        source: 'console',
      },
    );
    const chat = await harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(chat.headers.get('x-svc-model'), 'up/beta');
  });
});

describe('console sign-in races', () => {
  test('racing first sign-ins yield one owner', async () => {
    const harness = await startHarness();
    try {
      const client = consoleClient(harness.gateway.url);
      const accounts = [owner, member, stranger];
      const prepared = await Promise.all(
        accounts.map(async (account) => {
          const { message } = await client.nonce(account.address);
          return { message, signature: await account.signMessage({ message }) };
        }),
      );
      const results = await Promise.all(prepared.map(({ message, signature }) => client.signInWith(message, signature)));
      const statuses = results.map((response) => response.status).sort();
      assert.deepEqual(statuses, [200, 403, 403]);
    } finally {
      await harness.close();
    }
  });

  test('two verifications racing with one nonce: one wins', async () => {
    const harness = await startHarness();
    try {
      const client = consoleClient(harness.gateway.url);
      const { message } = await client.nonce(owner.address);
      const signature = await owner.signMessage({ message });
      const results = await Promise.all([client.signInWith(message, signature), client.signInWith(message, signature)]);
      assert.deepEqual(results.map((response) => response.status).sort(), [200, 401]);
    } finally {
      await harness.close();
    }
  });
});
