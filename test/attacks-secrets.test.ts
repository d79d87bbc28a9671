import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { privateKeyToAccount } from 'viem/accounts';
import { consoleClient, json } from './helpers/console-client.ts';
import { FIX_INPUT } from './helpers/fix-fixtures.ts';
import { startHarness, UPSTREAM_ANTHROPIC_KEY, UPSTREAM_OPENAI_KEY, type Harness } from './helpers/gateway-harness.ts';
import { startOtlpReceiver, type OtlpReceiver } from './helpers/otlp-receiver.ts';

/**
 * Plaintext keys in logs (an advisory of a peer gateway): after a run of every kind of request,
 * failures included, no provider key, full gateway key, session cookie or sign-in signature is
 * in anything the gateway wrote: its log lines, /metrics, receipts, error bodies, traces, and
 * its database file.
 */

const owner = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

describe('secrets never appear in what the gateway writes', () => {
  let receiver: OtlpReceiver;
  let harness: Harness;
  let logs = '';
  let databaseDirectory = '';

  before(async () => {
    receiver = await startOtlpReceiver();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logs += String(chunk);
        done();
      },
    });
    harness = await startHarness({
      logger: pino({ level: 'trace' }, sink) as unknown as FastifyBaseLogger,
      editConfig: (text) => text.replace(/database: \{ path: "([^"]+)" \}/, (line, path: string) => ((databaseDirectory = join(path, '..')), line)),
    });
  });
  after(async () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    await harness?.close();
    await receiver?.close();
  });

  test('after chats, streams, fallbacks, failures echoing the provider key, refusals, fix runs and console sign-in', async () => {
    const { fake } = harness;
    const bodies: string[] = [];
    const keep = async (response: Response) => {
      const text = await response.text();
      bodies.push(JSON.stringify([...response.headers]), text);
      return text;
    };
    const chat = (body: Record<string, unknown>, key?: string, headers?: Record<string, string>) =>
      harness.post('/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], ...body }, key, headers).then(keep);

    // Providers that echo the credential they were sent, as some do in a 401.
    const echoOpenAI = { error: { message: `Incorrect API key provided: ${UPSTREAM_OPENAI_KEY}`, type: 'invalid_request_error' } };
    const echoAnthropic = { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${UPSTREAM_ANTHROPIC_KEY}` } };
    fake.script('alpha', { status: 401, errorBody: echoOpenAI }, { status: 500, errorBody: echoOpenAI });
    fake.script('claude-x', { status: 401, errorBody: echoAnthropic });
    await chat({ model: 'up/alpha' });
    await chat({ model: 'svc/fast' });
    await chat({ model: 'anth/claude' });
    await chat({ model: 'svc/fast', stream: true });
    fake.script('beta', { text: 'mid', dieAfterChunks: 1 });
    await chat({ model: 'up/beta', stream: true });
    await keep(
      await harness.post('/v1/messages', { model: 'anth/claude', max_tokens: 20, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    );
    await keep(await harness.post('/v1/responses', { model: 'up/alpha', input: 'hi' }));
    await keep(await harness.post('/v1/messages/count_tokens', { model: 'anth/claude', messages: [{ role: 'user', content: 'hi' }] }));
    await keep(await harness.post('/v1/fix/quote', { agent: 'code-fix', tier: 'fast', ...FIX_INPUT }));
    await chat({ model: 'no-such-model' });
    await chat({ model: 'up/alpha', messages: 'not a list' });

    // Keys that are not valid, in every header, and a valid one in places it must never be read from.
    const guessed = `svc_${'Q'.repeat(40)}`;
    await chat({ model: 'up/alpha' }, guessed);
    await keep(await fetch(`${harness.gateway.url}/v1/models`, { headers: { 'x-api-key': guessed } }));
    await keep(await fetch(`${harness.gateway.url}/v1/models?api_key=${harness.key}&key=${harness.key}`));
    await keep(
      await fetch(`${harness.gateway.url}/v1/models`, { headers: { authorization: `Basic ${Buffer.from(`${harness.key}:`).toString('base64')}` } }),
    );
    await keep(await fetch(`${harness.gateway.url}/v1/nope/${harness.key}`, { headers: { authorization: `Bearer ${harness.key}` } }));
    await keep(await harness.get('/v1/receipts?limit=100'));
    await keep(await harness.get('/v1/balance'));

    // The console: sign in (a signature), make a key (its value shown once), use it, revoke it, sign out.
    const client = consoleClient(harness.gateway.url);
    const { message } = await client.nonce(owner.address);
    const signature = await owner.signMessage({ message });
    const signedIn = await client.signInWith(message, signature);
    const signInBody = await json(signedIn);
    const cookie = signedIn.headers.getSetCookie()[0]!.split(';')[0]!;
    const session = { cookie, csrf: signInBody.csrf_token, address: owner.address, role: 'owner' };
    const created = await json(await client.call('POST', '/keys', { body: { name: 'console-made', scopes: ['inference'] }, session }));
    await chat({ model: 'up/beta' }, created.key);
    await keep(await client.call('GET', '/keys', { session }));
    await keep(await client.call('GET', '/receipts', { session }));
    await keep(await client.call('GET', '/audit', { session }));
    await keep(await client.call('POST', `/keys/${created.record.id}/revoke`, { session }));
    await chat({ model: 'up/beta' }, created.key);
    await keep(await client.call('GET', '/keys', { headers: { cookie: `${cookie}x` } }));
    await keep(await client.call('POST', '/sign-out', { session }));
    await keep(await client.call('GET', '/session', { session }));

    await harness.gateway.deps.tracing!.flush();
    await receiver.waitFor((spans) => spans.length >= 10);
    const metrics = await (await fetch(`${harness.gateway.url}/metrics`)).text();
    // The database and its write-ahead log, as they are on disk.
    const files = (await readdir(databaseDirectory)).filter((name) => name.startsWith('gateway.db'));
    assert.ok(files.length > 0);
    const database = (await Promise.all(files.map((name) => readFile(join(databaseDirectory, name)))))
      .map((bytes) => bytes.toString('latin1'))
      .join('');

    const secrets: Record<string, string> = {
      'the OpenAI provider key': UPSTREAM_OPENAI_KEY,
      'the Anthropic provider key': UPSTREAM_ANTHROPIC_KEY,
      'the gateway key': harness.key,
      'the secret part of the gateway key': harness.key.slice(12),
      'a console-made key': created.key,
      'a guessed key': guessed,
      'the session cookie': cookie.split('=')[1]!,
      'the sign-in signature': signature,
      'the signature without 0x': signature.slice(2),
    };
    const written: Record<string, string> = {
      'log lines': logs,
      '/metrics': metrics,
      'answers and error bodies': bodies.join('\n'),
      traces: receiver.bodies.join('\n'),
      'the database files': database,
    };
    assert.ok(logs.includes('"msg":"request"'), 'the request log ran');
    assert.ok(bodies.join('').includes('provider_auth_error') || bodies.join('').includes('provider_unavailable'), 'provider failures happened');
    for (const [where, text] of Object.entries(written)) {
      for (const [what, secret] of Object.entries(secrets)) {
        assert.ok(
          !text.includes(secret),
          `${what} appears in ${where}: …${text.slice(Math.max(0, text.indexOf(secret) - 120), text.indexOf(secret) + 40)}…`,
        );
      }
    }
  });
});
