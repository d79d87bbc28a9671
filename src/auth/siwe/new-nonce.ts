import { randomBytes } from 'node:crypto';

const NONCE_BYTES = 16;

/**
 * A random 32-character alphanumeric (hex) nonce with 128 bits from the system CSPRNG.
 * viem's generateSiweNonce is not used: it draws from Math.random.
 */
export function newSignInNonce(): string {
  return randomBytes(NONCE_BYTES).toString('hex');
}
