import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lookUpCatalogModel, vendorOfBaseUrl } from './price-catalog.ts';
import { traitsOf } from './model-traits.ts';

test('a Claude Code default model name finds its catalog entry, with its tier past 200k input tokens', () => {
  const found = lookUpCatalogModel('anthropic', 'claude-sonnet-4-5-20250929');
  assert.ok(found);
  assert.equal(found.catalogId, 'anthropic:claude-sonnet-4-5');
  assert.equal(found.contextWindow, 200_000);
  assert.deepEqual(found.price, {
    inputNanoPerMillion: 3_000_000_000,
    cachedInputNanoPerMillion: 300_000_000,
    cacheWriteNanoPerMillion: 3_750_000_000,
    outputNanoPerMillion: 15_000_000_000,
  });
  assert.deepEqual(found.tiers, [
    {
      aboveInputTokens: 200_000,
      price: {
        inputNanoPerMillion: 6_000_000_000,
        cachedInputNanoPerMillion: 600_000_000,
        cacheWriteNanoPerMillion: 7_500_000_000,
        outputNanoPerMillion: 22_500_000_000,
      },
    },
  ]);
});

test('OpenAI prices: no cache-write charge means cache writes cost the input price', () => {
  const found = lookUpCatalogModel('openai', 'gpt-4.1-nano');
  assert.ok(found);
  assert.deepEqual(found.price, {
    inputNanoPerMillion: 100_000_000,
    cachedInputNanoPerMillion: 25_000_000,
    cacheWriteNanoPerMillion: 100_000_000,
    outputNanoPerMillion: 400_000_000,
  });
  assert.deepEqual(found.tiers, []);
  assert.equal(lookUpCatalogModel('openai', 'gpt-no-such-model-7'), null);
  assert.equal(lookUpCatalogModel('nobody', 'gpt-4.1-nano'), null);
});

test('Gemini 2.5 Pro is tiered too', () => {
  const found = lookUpCatalogModel('google', 'gemini-2.5-pro');
  assert.equal(found?.price?.inputNanoPerMillion, 1_250_000_000);
  assert.equal(found?.tiers[0]?.aboveInputTokens, 200_000);
  assert.equal(found?.tiers[0]?.price.inputNanoPerMillion, 2_500_000_000);
  assert.equal(found?.tiers[0]?.price.outputNanoPerMillion, 15_000_000_000);
});

test('a base URL names its vendor; an unknown host names none', () => {
  assert.equal(vendorOfBaseUrl('https://api.groq.com/openai/v1'), 'groq');
  assert.equal(vendorOfBaseUrl('https://api.deepseek.com/v1'), 'deepseek');
  assert.equal(vendorOfBaseUrl('https://openrouter.ai/api/v1'), 'openrouter');
  assert.equal(vendorOfBaseUrl('http://127.0.0.1:11434/v1'), undefined);
});

test('output limits and capabilities per family, OpenRouter names included', () => {
  assert.deepEqual(traitsOf('claude-sonnet-4-5-20250929'), { maxOutputTokens: 64_000, tools: true, vision: true, reasoning: true });
  assert.deepEqual(traitsOf('anthropic/claude-opus-4.1'), { maxOutputTokens: 32_000, tools: true, vision: true, reasoning: true });
  assert.equal(traitsOf('gpt-4.1-nano')?.maxOutputTokens, 32_768);
  assert.equal(traitsOf('gpt-4o-mini')?.reasoning, false);
  assert.equal(traitsOf('o3-mini')?.vision, false);
  assert.equal(traitsOf('some-house-model'), undefined);
});
