import { it } from 'node:test';
import assert from 'node:assert/strict';
import { newSignInNonce } from './new-nonce.ts';

it('newSignInNonce gives distinct alphanumeric nonces of at least 17 characters', () => {
  const nonces = new Set(Array.from({ length: 1_000 }, newSignInNonce));
  assert.equal(nonces.size, 1_000);
  for (const nonce of nonces) assert.match(nonce, /^[a-zA-Z0-9]{17,}$/);
});
