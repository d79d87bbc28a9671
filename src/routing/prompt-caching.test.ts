import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { configSchema } from '../config/schema.ts';
import { automaticCachingFor } from './prompt-caching.ts';

function config(extra: Record<string, unknown> = {}, alias: Record<string, unknown> = {}) {
  const candidates = { candidates: ['openai/gpt-4.1-mini'] };
  return configSchema.parse({
    providers: [
      { id: 'openai', kind: 'openai', base_url: 'https://api.openai.com/v1' },
      { id: 'local', kind: 'openai', base_url: 'http://127.0.0.1:11434/v1', catalog: 'none' },
    ],
    models: [{ id: 'openai/gpt-4.1-mini', provider: 'openai' }],
    aliases: { 'svc/fast': candidates, 'svc/balanced': candidates, 'svc/best': candidates, 'team/coder': { ...candidates, ...alias } },
    ...extra,
  });
}

const key = { id: 'key_1', prefix: 'svc_Ab12Cd34' };

describe('automatic prompt caching settings', () => {
  test('on by default, for every alias and key', () => {
    assert.equal(automaticCachingFor(config(), key, 'team/coder'), true);
    assert.equal(automaticCachingFor(config(), key, undefined), true);
  });

  test("the key's setting wins over the alias's, which wins over the default", () => {
    const off = config({}, { prompt_caching: false });
    assert.equal(automaticCachingFor(off, key, 'team/coder'), false);
    assert.equal(automaticCachingFor(off, key, 'svc/fast'), true);
    const keyOn = config({ prompt_caching: { keys: { svc_Ab12Cd34: true } } }, { prompt_caching: false });
    assert.equal(automaticCachingFor(keyOn, key, 'team/coder'), true);
    const keyOff = config({ prompt_caching: { automatic: true, keys: { key_1: false } } });
    assert.equal(automaticCachingFor(keyOff, key, 'svc/fast'), false);
    assert.equal(automaticCachingFor(keyOff, { id: 'key_2', prefix: 'svc_Zz' }, 'svc/fast'), true);
    assert.equal(automaticCachingFor(config({ prompt_caching: { automatic: false } }), key, 'svc/fast'), false);
  });

  test("prompt_cache_key goes to OpenAI's API by default, to other OpenAI-compatible servers only when set", () => {
    const [openai, local] = config().providers;
    assert.equal(openai!.promptCacheKey, true);
    assert.equal(local!.promptCacheKey, false);
    assert.throws(() => config({ prompt_caching: { automatic: 'yes' } }), /prompt_caching/);
  });
});
