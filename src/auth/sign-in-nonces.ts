import type { ConsoleStore } from '../storage/console-store.ts';
import { newSignInNonce } from './siwe/new-nonce.ts';
import { SIGN_IN_VALIDITY_MS } from './siwe/sign-in-settings.ts';

export interface IssuedNonce {
  nonce: string;
  issuedAt: Date;
  expiresAt: Date;
}

/**
 * Single-use sign-in nonces, each bound to the address it was issued for and valid 10 minutes.
 * `consume` takes a nonce atomically: of two verifications racing with one nonce, one gets it.
 */
export interface SignInNonces {
  issue(address: string, now: number): Promise<IssuedNonce>;
  /** The lower-case address the nonce was issued for, or null when unknown, used or expired. */
  consume(nonce: string, now: number): Promise<string | null>;
}

/** In the database, for deployments without Redis. */
export function storeSignInNonces(store: ConsoleStore): SignInNonces {
  return {
    async issue(address, now) {
      const nonce = newSignInNonce();
      const expiresAt = new Date(now + SIGN_IN_VALIDITY_MS);
      await store.insertSignInNonce({
        nonce,
        address: address.toLowerCase(),
        createdAt: new Date(now).toISOString(),
        expiresAt: expiresAt.toISOString(),
      });
      return { nonce, issuedAt: new Date(now), expiresAt };
    },
    async consume(nonce, now) {
      return (await store.consumeSignInNonce(nonce, new Date(now).toISOString()))?.address ?? null;
    },
  };
}
