import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validatorsReady } from '../src/formats/body-validators.ts';
import { startHarness } from './helpers/gateway-harness.ts';

// Its own file, so its own process: nothing compiled the body checkers before this test.
test('the chat, messages and responses body checkers are compiled when the gateway starts, before any request', async () => {
  assert.equal(validatorsReady(), false, 'importing the app compiles nothing');
  const harness = await startHarness();
  try {
    assert.equal(validatorsReady(), true, 'compiled before the gateway listens');
    harness.fake.script('alpha', { text: 'ok' });
    const response = await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(response.status, 200);
  } finally {
    await harness.close();
  }
});
