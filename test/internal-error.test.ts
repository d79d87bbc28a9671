import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness } from './helpers/gateway-harness.ts';

test('an unexpected failure is internal_error 500, retryable, with nothing internal in the body', async () => {
  const harness = await startHarness();
  try {
    // Break the storage under the running server: every request now hits an unexpected error.
    await harness.gateway.deps.store.close();
    const response = await harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'x' }] });
    assert.equal(response.status, 500);
    const text = await response.text();
    const body = JSON.parse(text);
    assert.equal(body.error.code, 'internal_error');
    assert.equal(body.error.retryable, true);
    assert.equal(body.error.request_id, response.headers.get('x-svc-request-id'));
    assert.ok(!/sqlite|database| {4}at |\.ts:/i.test(text), text);
  } finally {
    await harness.gateway.app.close();
    await harness.fake.close();
  }
});
