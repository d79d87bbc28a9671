import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { worstCaseCost } from '../src/billing/worst-case.ts';
import { PromptMeasure } from '../src/tokens/token-estimate.ts';
import { parseChatCompletionRequest } from '../src/formats/openai-chat/parse-chat-request.ts';
import { tokenizerWork } from '../src/tokens/text-token-count.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

/**
 * A hold is first placed on the prompt's UTF-8 bytes. When that is refused, the prompt is counted
 * and the tighter worst case tried, unless even the prompt's floor cannot fit what is left.
 */

let harness: Harness;
before(async () => {
  harness = await startHarness({ fundsNano: 0 });
});
after(() => harness.close());

// English is ~4.5 bytes a token: its byte bound is ~3x its counted bound, margin included.
const body = { model: 'up/alpha', max_tokens: 10, messages: [{ role: 'user', content: 'the gateway holds the worst case first. '.repeat(500) }] };
const byteWorst = () =>
  worstCaseCost(new PromptMeasure(parseChatCompletionRequest(body).request), [harness.gateway.deps.catalog.models.get('up/alpha')!]);

async function send() {
  const characters = tokenizerWork.characters;
  const response = await harness.post('/v1/chat/completions', body);
  return { status: response.status, json: (await response.json()) as any, tokenized: tokenizerWork.characters - characters };
}

test('refused on the floor when no count could fit what is left: the tokenizer never runs', async () => {
  await harness.gateway.deps.store.addFunds(DEFAULT_ACCOUNT_ID, Math.floor(byteWorst() / 10), 'test');
  const refused = await send();
  assert.deepEqual([refused.status, refused.json.error.code], [402, 'insufficient_balance']);
  assert.equal(refused.tokenized, 0);
});

test('a byte-bound hold that does not fit is counted and the tighter hold served', async () => {
  // Now half the byte bound is available: more than the counted worst case, less than the bytes'.
  await harness.gateway.deps.store.addFunds(DEFAULT_ACCOUNT_ID, Math.floor(byteWorst() / 2) - Math.floor(byteWorst() / 10), 'test');
  harness.fake.script('alpha', { text: 'ok', usage: { prompt: 4_000, completion: 1 } });
  const served = await send();
  assert.equal(served.status, 200, JSON.stringify(served.json));
  assert.ok(served.tokenized > 0, 'the prompt was counted');
});
