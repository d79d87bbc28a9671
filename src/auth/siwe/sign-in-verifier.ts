import { isHex, type Hex } from 'viem';
import { SIGN_IN_VALIDITY_MS } from './sign-in-settings.ts';
import { SignInError } from './sign-in-error.ts';
import { validateSignInSettings, type SignInSettings } from './sign-in-settings.ts';
import { parseSignInMessage, type ParsedSignInMessage } from './parse-sign-in-message.ts';
import { SignatureChecker } from './check-signature.ts';

export { SignInError, type SignInRefusal } from './sign-in-error.ts';
export type { SignInSettings } from './sign-in-settings.ts';

/** Browser clocks run a little ahead; an Issued At up to this far in the future is accepted. */
export const CLOCK_SKEW_MS = 60_000;
// Room for an ERC-6492 signature (factory calldata plus the inner signature), refusing junk.
const MAX_SIGNATURE_HEX_LENGTH = 2 + 2 * 8_192;

export interface VerifiedSignIn {
  /** EIP-55 checksummed. */
  address: string;
  chainId: number;
  nonce: string;
}

/** Verifies a signed EIP-4361 console sign-in against configured settings. */
export class SignInVerifier {
  private readonly settings: SignInSettings;
  private readonly signatures: SignatureChecker;

  /** Validates settings (throws naming the bad setting). */
  constructor(
    settings: SignInSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.settings = validateSignInSettings(settings);
    this.signatures = new SignatureChecker(this.settings.rpcUrls);
  }

  /**
   * Checks the message's fields, consumes its nonce (before the signature, so even a failed
   * attempt cannot be replayed), then the signature. Throws SignInError with the refusal reason.
   * `consumeNonce` returns the lower-case address the nonce was issued for, or null.
   */
  async verify(input: { message: string; signature: string }, consumeNonce: (nonce: string) => Promise<string | null>): Promise<VerifiedSignIn> {
    const message = parseSignInMessage(input.message);
    const signature = checkSignatureShape(input.signature);
    this.checkOrigin(message);
    this.checkTimes(message, this.now());
    const issuedFor = await consumeNonce(message.nonce);
    if (issuedFor === null) throw new SignInError('unknown_nonce', 'This sign-in request is unknown, already used or expired; please start again.');
    if (issuedFor.toLowerCase() !== message.address.toLowerCase()) {
      throw new SignInError('unknown_nonce', 'This sign-in request was issued for a different wallet address; please start again.');
    }
    await this.signatures.check({ address: message.address, chainId: message.chainId, message: input.message, signature });
    return { address: message.address, chainId: message.chainId, nonce: message.nonce };
  }

  private checkOrigin(message: ParsedSignInMessage): void {
    const { domain, origin, chainIds } = this.settings;
    const scheme = new URL(origin).protocol.slice(0, -1);
    if (message.domain !== domain || (message.scheme !== undefined && message.scheme !== scheme)) {
      throw new SignInError('wrong_domain', `The message asks to sign in to ${message.domain}, not to ${domain}; it may come from another site.`);
    }
    if (!isUnderOrigin(message.uri, origin)) {
      throw new SignInError('wrong_uri', `The message names ${message.uri}, which is not on ${origin}.`);
    }
    if (message.version !== '1') throw new SignInError('malformed', 'The sign-in message must be EIP-4361 Version 1.');
    if (!chainIds.includes(message.chainId)) {
      throw new SignInError(
        'wrong_chain',
        `Sign-in on chain ${message.chainId} is not accepted; switch the wallet to chain ${chainIds.join(' or ')}.`,
      );
    }
  }

  private checkTimes(message: ParsedSignInMessage, now: number): void {
    const issuedAt = message.issuedAt.getTime();
    if (issuedAt > now + CLOCK_SKEW_MS) {
      throw new SignInError('issued_in_future', 'The message is dated in the future; check the clock of this device.');
    }
    if (message.expirationTime === undefined) throw new SignInError('malformed', 'The sign-in message has no Expiration Time.');
    const expiresAt = message.expirationTime.getTime();
    if (expiresAt <= now) throw new SignInError('expired', 'The sign-in message has expired; please sign in again.');
    if (expiresAt - issuedAt > SIGN_IN_VALIDITY_MS) {
      throw new SignInError('too_long', 'The sign-in message is valid for more than 10 minutes, which the console does not accept.');
    }
    if (message.notBefore !== undefined && message.notBefore.getTime() > now) {
      throw new SignInError('not_yet_valid', 'The sign-in message is not valid yet (Not Before is in the future).');
    }
  }
}

function checkSignatureShape(signature: string): Hex {
  if (
    typeof signature !== 'string' ||
    !isHex(signature, { strict: true }) ||
    signature.length % 2 !== 0 ||
    signature.length <= 2 ||
    signature.length > MAX_SIGNATURE_HEX_LENGTH
  ) {
    throw new SignInError('malformed', 'The signature is not a hex string of the expected length.');
  }
  return signature;
}

function isUnderOrigin(uri: string, origin: string): boolean {
  try {
    const url = new URL(uri);
    return url.origin === origin && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}
