import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../config/load-config.ts';
import type { PromptMeasure } from '../tokens/token-estimate.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import { costOfCall, pricesOf } from './price-usage.ts';
import { estimatedCallCost, worstCaseCost } from './worst-case.ts';

// claude-sonnet-4-5 from the catalog: $3 / $0.30 / $3.75 / $15 per 1M tokens, and
// $6 / $0.60 / $7.50 / $22.50 for every token of a request whose prompt passes 200,000 tokens.
const config = parseConfig(
  `
providers:
  - { id: anthropic, kind: anthropic, base_url: "https://api.anthropic.com" }
models:
  - { id: anthropic/claude-sonnet-4-5, provider: anthropic }
aliases:
  svc/fast: { candidates: [anthropic/claude-sonnet-4-5] }
  svc/balanced: { candidates: [anthropic/claude-sonnet-4-5] }
  svc/best: { candidates: [anthropic/claude-sonnet-4-5] }
`,
  'tiers.yaml',
  {},
);
const sonnet = config.models[0]!;
const usage = (inputTokens: number, cachedInputTokens: number, cacheWriteTokens: number, outputTokens: number) => ({
  inputTokens,
  cachedInputTokens,
  cacheWriteTokens,
  outputTokens,
  reasoningTokens: 0,
});

test('a prompt below the tier pays the base prices', () => {
  // 40,000 uncached x $3 = $0.12; 100,000 cached x $0.30 = $0.03; 10,000 written x $3.75 = $0.0375;
  // 2,000 out x $15 = $0.03: $0.2175.
  assert.equal(costOfCall(sonnet, usage(150_000, 100_000, 10_000, 2_000)), 217_500_000);
  assert.equal(pricesOf(sonnet, usage(150_000, 100_000, 10_000, 2_000)).inputNanoPerMillion, 3_000_000_000);
});

test('a prompt above the tier pays the tier prices for every token', () => {
  // 140,000 uncached x $6 = $0.84; 100,000 cached x $0.60 = $0.06; 10,000 written x $7.50 = $0.075;
  // 2,000 out x $22.50 = $0.045: $1.02.
  assert.equal(costOfCall(sonnet, usage(250_000, 100_000, 10_000, 2_000)), 1_020_000_000);
  assert.deepEqual(pricesOf(sonnet, usage(250_000, 100_000, 10_000, 2_000)), {
    inputNanoPerMillion: 6_000_000_000,
    cachedInputNanoPerMillion: 600_000_000,
    cacheWriteNanoPerMillion: 7_500_000_000,
    outputNanoPerMillion: 22_500_000_000,
  });
});

test('the tier starts past 200,000 prompt tokens: exactly 200,000 is base', () => {
  // 200,000 x $3 = $0.60; 200,001 x $6 = $1.200006.
  assert.equal(costOfCall(sonnet, usage(200_000, 0, 0, 0)), 600_000_000);
  assert.equal(costOfCall(sonnet, usage(200_001, 0, 0, 0)), 1_200_006_000);
});

/** A prompt whose input bound is `tokens` (what the hold reads of it). */
function promptBoundedBy(tokens: number, maxOutputTokens: number): PromptMeasure {
  const request = { messages: [], maxOutputTokens } as unknown as ChatRequest;
  return { request, ceiling: () => tokens } as unknown as PromptMeasure;
}

test("the hold's worst case uses the dearest tier the prompt's bound can reach, every input token at the cache-write price", () => {
  // Bound 150,000: 150,000 x $3.75 (a cache write) + 1,000 x $15 = $0.5625 + $0.015 = $0.5775.
  assert.equal(worstCaseCost(promptBoundedBy(150_000, 1_000), [sonnet]), 577_500_000);
  // Bound 250,000: 250,000 x $7.50 + 1,000 x $22.50 = $1.875 + $0.0225 = $1.8975.
  assert.equal(worstCaseCost(promptBoundedBy(250_000, 1_000), [sonnet]), 1_897_500_000);
  // Without max_tokens, the model's 64,000: 250,000 x $7.50 + 64,000 x $22.50 = $1.875 + $1.44 = $3.315.
  assert.equal(worstCaseCost(promptBoundedBy(250_000, undefined as unknown as number), [sonnet]), 3_315_000_000);
  // What a request whose process died is charged: the prompt at the input price, no cache write assumed.
  assert.equal(estimatedCallCost(promptBoundedBy(150_000, 1_000), [sonnet]), 450_000_000);
});
