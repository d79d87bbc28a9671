import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nearestName } from './nearest-name.ts';

const names = ['svc/fast', 'svc/balanced', 'svc/best', 'anthropic/claude-sonnet-4-5', 'openai/gpt-4o-mini'];

test('a swapped pair, a missing letter and a wrong case find the name meant', () => {
  assert.equal(nearestName('svc/fsat', names), 'svc/fast');
  assert.equal(nearestName('svc/balnced', names), 'svc/balanced');
  assert.equal(nearestName('SVC/Best', names), 'svc/best');
  assert.equal(nearestName('openai/gpt-4o-mni', names), 'openai/gpt-4o-mini');
});

test('the nearest of two close names wins', () => {
  assert.equal(nearestName('svc/bst', names), 'svc/best');
});

test('a name far from every known one gets no suggestion', () => {
  assert.equal(nearestName('mistral/large', names), undefined);
  assert.equal(nearestName('x', names), undefined);
  assert.equal(nearestName('svc/fast', []), undefined);
});
