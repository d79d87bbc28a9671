import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countingStarted } from '../src/tokens/text-token-count.ts';
import { startHarness } from './helpers/gateway-harness.ts';

// Its own file, so its own process: no other test started the counting thread before it.
test('the counting thread starts once a body of megabytes was answered, ready for the next; a small body does not start it', async () => {
  // A body limit of 3 MiB, so that a refused body is quick to send.
  const harness = await startHarness({
    editConfig: (text) => text.replace('server: { host: 127.0.0.1, port: 0 }', 'server: { host: 127.0.0.1, port: 0, body_limit_bytes: 3145728 }'),
  });
  try {
    const small = await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(small.status, 200);
    await small.arrayBuffer();
    assert.equal(countingStarted(), false, 'a small body started the counting thread');

    // Over the limit, or not JSON: refused before it was read, so nothing to count next.
    const tooLarge = await harness.post('/v1/chat/completions', {
      model: 'up/alpha',
      messages: [{ role: 'user', content: 'a'.repeat(4 * 1024 * 1024) }],
    });
    assert.equal(tooLarge.status, 413);
    await tooLarge.arrayBuffer();
    const notJson = await harness.post('/v1/chat/completions', `{"model": "up/alpha", "messages": "${'a'.repeat(2 * 1024 * 1024)}`);
    assert.equal(notJson.status, 400);
    await notJson.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(countingStarted(), false, 'a body refused before it was read started the counting thread');

    // 2 MiB of one character: refused on its floor (no count), beyond every model's window here.
    const large = await harness.post('/v1/chat/completions', {
      model: 'up/alpha',
      messages: [{ role: 'user', content: 'a'.repeat(2 * 1024 * 1024) }],
    });
    const answer = (await large.json()) as { error: { code: string; message: string } };
    assert.equal(large.status, 400);
    assert.equal(answer.error.code, 'unsupported_parameter', JSON.stringify(answer));
    assert.match(answer.error.message, /context window is 100000 tokens/);
    // onResponse runs once the answer is written: give it the turn.
    for (let turn = 0; turn < 50 && !countingStarted(); turn++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(countingStarted(), true, 'the counting thread was not started after a large body');
  } finally {
    await harness.close();
  }
});
