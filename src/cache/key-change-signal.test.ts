import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLocalKeyChangeSignal } from './key-change-signal.ts';

test('the local signal moves with the store token and with its own bumps', async () => {
  let token = 7;
  const signal = createLocalKeyChangeSignal({ keysChangeToken: async () => token });
  const first = await signal.current();
  assert.equal(await signal.current(), first, 'stable while nothing changes');
  token = 8; // another process (the CLI) committed
  const second = await signal.current();
  assert.notEqual(second, first);
  await signal.bump(); // this process changed keys itself
  const third = await signal.current();
  assert.notEqual(third, second);
  assert.notEqual(third, first);
});
