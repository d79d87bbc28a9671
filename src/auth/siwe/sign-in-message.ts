import { getAddress, isAddress } from 'viem';
import { createSiweMessage } from 'viem/siwe';
import { SIGN_IN_VALIDITY_MS } from './sign-in-settings.ts';

export { SIGN_IN_VALIDITY_MS };

export const SIGN_IN_STATEMENT = 'Sign in to the model-gateway console. This request triggers no blockchain transaction and costs no gas.';

export interface SignInMessageOptions {
  domain: string;
  origin: string;
  address: string;
  chainId: number;
  nonce: string;
  issuedAt: Date;
}

/**
 * The EIP-4361 message the page shows and the wallet signs, unchanged: domain line, checksummed
 * address, blank, statement, blank, URI, Version: 1, Chain ID, Nonce, Issued At, and an
 * Expiration Time ten minutes after Issued At.
 */
export function buildSignInMessage(options: SignInMessageOptions): string {
  const { domain, origin, address, chainId, nonce, issuedAt } = options;
  if (!isAddress(address, { strict: false })) throw new TypeError(`address is not an Ethereum address: ${address}`);
  if (Number.isNaN(issuedAt.getTime())) throw new TypeError('issuedAt is not a valid date');
  return createSiweMessage({
    domain,
    address: getAddress(address),
    statement: SIGN_IN_STATEMENT,
    uri: origin,
    version: '1',
    chainId,
    nonce,
    issuedAt,
    expirationTime: new Date(issuedAt.getTime() + SIGN_IN_VALIDITY_MS),
  });
}
