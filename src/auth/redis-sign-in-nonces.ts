import type { Redis } from 'ioredis';
import { newSignInNonce } from './siwe/new-nonce.ts';
import { SIGN_IN_VALIDITY_MS } from './siwe/sign-in-settings.ts';
import type { SignInNonces } from './sign-in-nonces.ts';

const REDIS_PREFIX = 'svc:siwe:nonce:';

/** In Redis (shared by every process): SET with an expiry, taken with GETDEL. */
export function redisSignInNonces(redis: Redis): SignInNonces {
  return {
    async issue(address, now) {
      const nonce = newSignInNonce();
      await redis.set(REDIS_PREFIX + nonce, address.toLowerCase(), 'PX', SIGN_IN_VALIDITY_MS, 'NX');
      return { nonce, issuedAt: new Date(now), expiresAt: new Date(now + SIGN_IN_VALIDITY_MS) };
    },
    async consume(nonce) {
      // Redis expires the key itself; a nonce past its 10 minutes is simply gone.
      return redis.getdel(REDIS_PREFIX + nonce);
    },
  };
}
