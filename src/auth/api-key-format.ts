import { hash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 40;
const PREFIX_LENGTH = 12;
const KEY_PATTERN = /^svc_[0-9A-Za-z]{40}$/;

/** A new key: `svc_` and 40 base62 characters (about 238 bits). Shown once, never stored. */
export function mintApiKey(): string {
  const bytes = randomBytes(SECRET_LENGTH * 2);
  let secret = '';
  for (const byte of bytes) {
    // 248 = 4 * 62: rejection sampling keeps every character equally likely.
    if (byte < 248) secret += ALPHABET[byte % 62];
    if (secret.length === SECRET_LENGTH) break;
  }
  return secret.length === SECRET_LENGTH ? `svc_${secret}` : mintApiKey();
}

export function isWellFormedApiKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** Hex SHA-256, once per request: the one-shot hash costs about a third of a Hash object's update and digest. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** The short prefix kept for display ("svc_Ab12Cd34"). */
export function displayPrefix(key: string): string {
  return key.slice(0, PREFIX_LENGTH);
}
