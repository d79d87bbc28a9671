import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
let pool = Buffer.alloc(0);
let offset = 0;

/** A time-ordered random suffix: 9 base36 characters of milliseconds, then 12 random ones. */
export function newSuffix(now = Date.now()): string {
  if (offset + 12 > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  let random = '';
  for (let index = 0; index < 12; index++) random += ALPHABET[pool[offset++]! % 36];
  return now.toString(36).padStart(9, '0') + random;
}

/** Request and receipt ids share their suffix, so either leads to the other. */
export function newRequestIds(): { requestId: string; receiptId: string } {
  const suffix = newSuffix();
  return { requestId: `req_${suffix}`, receiptId: `rcpt_${suffix}` };
}

export function newKeyId(): string {
  return `key_${newSuffix()}`;
}
