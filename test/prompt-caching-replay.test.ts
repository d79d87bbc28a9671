import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';
import { AnthropicPromptCache } from './fake-upstream/anthropic-prompt-cache.ts';

/**
 * A recorded Codex session (23 requests of one tool loop, test/helpers/record-codex-session.ts)
 * replayed through /v1/responses to an Anthropic-kind model with the catalog's prices, once on an
 * alias with automatic prompt caching and once on one without. The fake provider reports cache
 * reads and writes from the breakpoints it receives, as Anthropic does; every receipt is priced
 * to the nano-dollar from those counts.
 */
const session = JSON.parse(readFileSync('test/fixtures/codex-tool-loop-session.json', 'utf8')) as {
  input_lengths: number[];
  request: Record<string, unknown> & { input: unknown[] };
};
const MODEL = 'anthropic/claude-sonnet-4-5';

let harness: Harness;
before(async () => {
  harness = await startHarness({
    editConfig: (text) =>
      text
        .replace('models:\n', `models:\n  - { id: ${MODEL}, provider: anth }\n`)
        .replace(
          'aliases:\n',
          'aliases:\n  team/cached: { candidates: [' + MODEL + '] }\n  team/uncached: { candidates: [' + MODEL + '], prompt_caching: false }\n',
        ),
  });
});
after(() => harness?.close());

interface Receipt {
  cost: string;
  warnings: string[];
  usage: { prompt_tokens: number; cached_tokens: number; cache_write_tokens: number; completion_tokens: number };
}

const nanos = (usd: string) => Number(usd.replace('.', ''));

/** Replays the session on `alias`; the receipts, in order, and the bodies the provider received. */
async function replay(alias: string): Promise<{ receipts: Receipt[]; upstream: Array<Record<string, unknown>> }> {
  harness.fake.reset();
  const receipts: Receipt[] = [];
  for (const length of session.input_lengths) {
    const response = await harness.post('/v1/responses', { ...session.request, model: alias, input: session.request.input.slice(0, length) });
    assert.equal(response.status, 200, await response.clone().text());
    await response.text();
    const receipt = await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`);
    receipts.push((await receipt.json()) as Receipt);
  }
  return { receipts, upstream: harness.fake.requests.map((request) => request.body as Record<string, unknown>) };
}

/** Cost at the catalog's Claude Sonnet 4.5 prices (USD per 1M: input 3, cache read 0.30, cache write 3.75, output 15), in nano-USD. */
function expectedCost(usage: Receipt['usage']): number {
  const uncached = usage.prompt_tokens - usage.cached_tokens - usage.cache_write_tokens;
  const total =
    BigInt(uncached) * 3_000_000_000n +
    BigInt(usage.cached_tokens) * 300_000_000n +
    BigInt(usage.cache_write_tokens) * 3_750_000_000n +
    BigInt(usage.completion_tokens) * 15_000_000_000n;
  return Number((total + 500_000n) / 1_000_000n);
}

const total = (receipts: Receipt[]) => receipts.reduce((sum, receipt) => sum + nanos(receipt.cost), 0);

const breakpointsOf = (body: Record<string, unknown>) => (JSON.stringify(body).match(/"cache_control"/g) ?? []).length;

describe('a recorded Codex session on an Anthropic-kind model', () => {
  let cached: Awaited<ReturnType<typeof replay>>;
  let uncached: Awaited<ReturnType<typeof replay>>;
  before(async () => {
    uncached = await replay('team/uncached');
    cached = await replay('team/cached');
  });

  test('without automatic caching, no breakpoint goes upstream and every turn pays the whole prompt at the input price', () => {
    assert.equal(uncached.upstream.length, session.input_lengths.length);
    for (const body of uncached.upstream) assert.equal(breakpointsOf(body), 0);
    for (const receipt of uncached.receipts) {
      assert.equal(receipt.usage.cached_tokens, 0);
      assert.equal(receipt.usage.cache_write_tokens, 0);
      assert.equal(nanos(receipt.cost), expectedCost(receipt.usage));
    }
  });

  test('with it, at most four breakpoints a request, and each turn reads what the one before wrote', () => {
    assert.equal(cached.upstream.length, session.input_lengths.length);
    // The fake's own accounting, run again over what it received: the receipts carry its figures.
    const cache = new AnthropicPromptCache();
    cached.upstream.forEach((body, index) => {
      const breakpoints = breakpointsOf(body);
      assert.ok(breakpoints >= 1 && breakpoints <= 4, `request ${index}: ${breakpoints} breakpoints`);
      const { cached: read, cacheWrite } = cache.account(body);
      const receipt = cached.receipts[index]!;
      assert.equal(receipt.usage.cached_tokens, read, `request ${index}`);
      assert.equal(receipt.usage.cache_write_tokens, cacheWrite, `request ${index}`);
      assert.equal(nanos(receipt.cost), expectedCost(receipt.usage), `request ${index}`);
      // The same prompt either way: caching changes its price, not its size.
      assert.equal(receipt.usage.prompt_tokens, uncached.receipts[index]!.usage.prompt_tokens);
    });
    // Codex's own prompt_cache_key is what the breakpoints do for an Anthropic model: not a dropped setting.
    for (const receipt of cached.receipts)
      assert.ok(!receipt.warnings.some((warning) => warning.includes('prompt_cache_key')), receipt.warnings.join('\n'));
    const first = cached.receipts[0]!.usage;
    assert.equal(first.cached_tokens, 0);
    assert.ok(first.cache_write_tokens > 1_024, 'the first request writes the tools, instructions and first turn');
    for (const receipt of cached.receipts.slice(1)) {
      const { usage } = receipt;
      assert.ok(usage.cached_tokens >= cached.receipts[0]!.usage.cache_write_tokens, 'every later turn reads at least the first prefix');
      // What a turn adds (a tool call and its output) is all it writes; the rest is read.
      assert.equal(usage.prompt_tokens - usage.cached_tokens - usage.cache_write_tokens, 0);
    }
  });

  test('costs less than half as much, priced to the nano-dollar', (t) => {
    const withCaching = total(cached.receipts);
    const without = total(uncached.receipts);
    const prompt = uncached.receipts.reduce((sum, receipt) => sum + receipt.usage.prompt_tokens, 0);
    t.diagnostic(
      `${session.input_lengths.length} requests, ${prompt} prompt tokens: without caching ${without} nano-USD, with ${withCaching} nano-USD (${((100 * withCaching) / without).toFixed(1)}%)`,
    );
    t.diagnostic(
      `the first request alone: without caching ${nanos(uncached.receipts[0]!.cost)} nano-USD, with ${nanos(cached.receipts[0]!.cost)} nano-USD`,
    );
    assert.ok(withCaching * 2 < without, `${withCaching} vs ${without}`);
  });
});
