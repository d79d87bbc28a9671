import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AnthropicPromptCache } from './anthropic-prompt-cache.ts';
import { anthropicTextTokens } from './count-prompt-tokens.ts';

/** The fake provider's prompt cache behaves as Anthropic documents it. */
const mark = { type: 'ephemeral' };
const long = 'Read the files before you change them. '.repeat(200);
const body = (system: unknown, messages: unknown[], model = 'claude-sonnet-4-5') => ({ model, max_tokens: 10, system, messages });
const user = (text: string, cache = false) => ({ role: 'user', content: [{ type: 'text', text, ...(cache ? { cache_control: mark } : {}) }] });

describe("the fake Anthropic provider's prompt cache", () => {
  test('a marked prefix is written once, then read; what follows it is neither', () => {
    const cache = new AnthropicPromptCache();
    const system = [{ type: 'text', text: long, cache_control: mark }];
    const tokens = anthropicTextTokens(long);
    assert.ok(tokens > 1_024);
    assert.deepEqual(cache.account(body(system, [user('first question')])), { cached: 0, cacheWrite: tokens });
    assert.deepEqual(cache.account(body(system, [user('another question')])), { cached: tokens, cacheWrite: 0 });
    // Another model has a cache of its own; a changed prefix is a new one.
    assert.deepEqual(cache.account(body(system, [user('q')], 'claude-opus-4-1')), { cached: 0, cacheWrite: tokens });
    assert.equal(cache.account(body([{ ...system[0], text: `${long}!` }], [user('q')])).cached, 0);
  });

  test('nothing is cached below the minimum length or without a breakpoint', () => {
    const cache = new AnthropicPromptCache();
    assert.deepEqual(cache.account(body([{ type: 'text', text: 'Be brief.', cache_control: mark }], [user('q')])), { cached: 0, cacheWrite: 0 });
    assert.deepEqual(cache.account(body(long, [user('q')])), { cached: 0, cacheWrite: 0 });
    assert.deepEqual(cache.account(body(long, [user('q')])), { cached: 0, cacheWrite: 0 });
    // Haiku 4.5 caches from 4,096 tokens only.
    assert.deepEqual(cache.account(body([{ type: 'text', text: long, cache_control: mark }], [user('q')], 'claude-haiku-4-5')), {
      cached: 0,
      cacheWrite: 0,
    });
  });

  test('a breakpoint reads a prefix written up to 20 blocks before it, not further', () => {
    const cache = new AnthropicPromptCache();
    const turns = (count: number, markLast: boolean) =>
      Array.from({ length: count }, (_, index) => user(index === 0 ? long : `turn ${index}`, markLast && index === count - 1));
    const first = cache.account(body(undefined, turns(1, true)));
    assert.ok(first.cacheWrite > 1_024);
    const near = cache.account(body(undefined, turns(21, true)));
    assert.equal(near.cached, first.cacheWrite, '20 blocks later: read');
    const far = new AnthropicPromptCache();
    far.account(body(undefined, turns(1, true)));
    assert.equal(far.account(body(undefined, turns(23, true))).cached, 0, '22 blocks later: too far back');
  });
});
