import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startHarness, UPSTREAM_ANTHROPIC_KEY, UPSTREAM_OPENAI_KEY, type Harness } from './helpers/gateway-harness.ts';

/**
 * SSRF through a client-supplied base URL (an advisory of a peer gateway): no field a client
 * sends, at the top level, nested or in a header, in any wire format, changes where the upstream
 * call goes or which credential it carries. Asserted at the fake upstream, and at a server of
 * the attacker's that the fields point to.
 */

describe('client fields never choose the upstream or its credential', () => {
  let harness: Harness;
  let evil: Server;
  let evilUrl = '';
  let evilHits = 0;

  before(async () => {
    harness = await startHarness();
    evil = createServer((request, response) => {
      evilHits++;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
  });
  after(async () => {
    await harness.close();
    await new Promise((resolve) => evil.close(resolve));
  });

  /** What LiteLLM-, OpenAI- and Anthropic-SDK-style clients call the target and its credential. */
  const steering = () => ({
    base_url: `${evilUrl}/v1`,
    api_base: `${evilUrl}/v1`,
    baseURL: `${evilUrl}/v1`,
    api_key: 'sk-attacker',
    apiKey: 'sk-attacker',
    api_version: '2099-01-01',
    organization: 'org-attacker',
    custom_llm_provider: 'openai',
    extra_headers: { authorization: 'Bearer sk-attacker', 'x-api-key': 'sk-attacker', host: 'attacker.example' },
    headers: { authorization: 'Bearer sk-attacker' },
    extra_body: { base_url: `${evilUrl}/v1`, api_key: 'sk-attacker' },
    litellm_params: { api_base: `${evilUrl}/v1`, api_key: 'sk-attacker' },
    provider: { base_url: `${evilUrl}/v1`, api_key: 'sk-attacker', order: ['attacker'] },
    metadata: { base_url: `${evilUrl}/v1`, user_id: 'u1' },
  });
  const steeringHeaders = {
    'x-base-url': `${evilUrl}/v1`,
    'x-api-base': `${evilUrl}/v1`,
    'openai-base-url': `${evilUrl}/v1`,
    'anthropic-base-url': evilUrl,
    'x-forwarded-host': 'attacker.example',
    'x-provider-api-key': 'sk-attacker',
    'openai-organization': 'org-attacker',
    'x-upstream-url': `${evilUrl}/v1/chat/completions`,
  };

  const cases: { route: string; model: string; upstream: 'openai' | 'anthropic'; body: (fields: Record<string, unknown>) => unknown }[] = [
    {
      route: '/v1/chat/completions',
      model: 'up/alpha',
      upstream: 'openai',
      body: (fields) => ({ model: 'up/alpha', messages: [{ role: 'user', content: 'hi', ...fields }], ...fields }),
    },
    {
      route: '/v1/chat/completions',
      model: 'anth/claude',
      upstream: 'anthropic',
      body: (fields) => ({ model: 'anth/claude', messages: [{ role: 'user', content: 'hi' }], ...fields }),
    },
    {
      route: '/v1/responses',
      model: 'up/alpha',
      upstream: 'openai',
      body: (fields) => ({ model: 'up/alpha', input: [{ role: 'user', content: 'hi' }], ...fields }),
    },
    {
      route: '/v1/messages',
      model: 'anth/claude',
      upstream: 'anthropic',
      body: (fields) => ({
        model: 'anth/claude',
        max_tokens: 50,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', ...fields }] }],
        ...fields,
      }),
    },
    {
      route: '/v1/messages',
      model: 'up/alpha',
      upstream: 'openai',
      body: (fields) => ({ model: 'up/alpha', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], ...fields }),
    },
  ];

  test('every wire format, fields at the top level, nested and in headers, streamed or not', async () => {
    const fakeHost = new URL(harness.fake.url).host;
    const answered = new Set<string>();
    for (const { route, model, upstream, body } of cases) {
      for (const stream of [false, true]) {
        for (const fields of [steering(), { ...steering(), stream }, { extra_body: steering(), stream }]) {
          harness.fake.reset();
          const payload = { ...(body(fields) as Record<string, unknown>), stream };
          const response = await harness.post(route, payload, undefined, { ...steeringHeaders, 'anthropic-version': '2023-06-01' });
          const text = await response.text();
          const what = `${route} ${model} stream=${stream}: ${response.status} ${text.slice(0, 200)}`;
          assert.equal(evilHits, 0, `nothing reached the attacker's server: ${what}`);
          // A body the format refuses never reaches a provider; one it accepts reaches the configured one only.
          for (const sent of harness.fake.requests) {
            assert.equal(sent.headers.host, fakeHost, what);
            if (upstream === 'openai') {
              assert.equal(sent.path, '/v1/chat/completions', what);
              assert.equal(sent.headers.authorization, `Bearer ${UPSTREAM_OPENAI_KEY}`, what);
              assert.equal(sent.headers['x-api-key'], undefined, what);
            } else {
              assert.equal(sent.path, '/v1/messages', what);
              assert.equal(sent.headers['x-api-key'], UPSTREAM_ANTHROPIC_KEY, what);
              assert.equal(sent.headers.authorization, undefined, what);
            }
            const headerText = JSON.stringify(sent.headers);
            assert.doesNotMatch(headerText, /attacker|sk-attacker|org-attacker/, `no client header goes upstream: ${what}`);
            assert.ok(!headerText.includes(evilUrl), what);
            assert.ok(!JSON.stringify(sent).includes(harness.key), `the client's gateway key never goes upstream: ${what}`);
          }
          if (response.status === 200) {
            assert.equal(harness.fake.requests.length, 1, what);
            answered.add(`${route} ${model} ${stream}`);
          }
        }
      }
    }
    // The fields are accepted (passed on as the client's own, or dropped), not refused: each case was served.
    assert.equal(answered.size, cases.length * 2, [...answered].join(', '));
  });
});
