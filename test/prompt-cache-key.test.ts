import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

/**
 * OpenAI-kind providers that take a prompt_cache_key get a stable one per key and conversation
 * when the client sent none, so the turns of one conversation reach the same cache; a client's
 * own key goes as sent, and a provider or alias without caching gets none.
 */
let harness: Harness;
before(async () => {
  harness = await startHarness({
    editConfig: (text) =>
      text
        .replace('id: up, kind: openai,', 'id: up, kind: openai, prompt_cache_key: true,')
        .replace('aliases:\n', 'aliases:\n  team/plain: { candidates: [up/alpha], prompt_caching: false }\n'),
  });
});
after(() => harness?.close());

const system = { role: 'system', content: 'You are a careful reviewer.' };
const firstTurn = [system, { role: 'user', content: 'Review this diff.' }];
const secondTurn = [...firstTurn, { role: 'assistant', content: 'It looks fine.' }, { role: 'user', content: 'And the tests?' }];

async function upstreamKey(body: Record<string, unknown>, key = harness.key): Promise<unknown> {
  harness.fake.reset();
  const response = await harness.post('/v1/chat/completions', { model: 'svc/fast', ...body }, key);
  assert.equal(response.status, 200, await response.clone().text());
  await response.text();
  return (harness.fake.requests[0]!.body as Record<string, unknown>).prompt_cache_key;
}

describe('prompt_cache_key for OpenAI-kind providers', () => {
  test('the same for every turn of one conversation of one key, another for another conversation or key', async () => {
    const first = await upstreamKey({ messages: firstTurn });
    assert.match(String(first), /^svc-[0-9a-f]{32}$/);
    assert.equal(await upstreamKey({ messages: secondTurn, stream: true }), first);
    assert.notEqual(await upstreamKey({ messages: [system, { role: 'user', content: 'Review another diff.' }] }), first);
    const { key: other } = await harness.createKey({ name: 'other' });
    assert.notEqual(await upstreamKey({ messages: firstTurn }, other), first);
  });

  test("a client's own key goes as sent; an alias with prompt_caching off sends none", async () => {
    assert.equal(await upstreamKey({ messages: firstTurn, prompt_cache_key: 'mine' }), 'mine');
    assert.equal(await upstreamKey({ model: 'team/plain', messages: firstTurn }), undefined);
  });
});
