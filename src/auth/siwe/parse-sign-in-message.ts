import { getAddress, type Address } from 'viem';
import { createSiweMessage, parseSiweMessage } from 'viem/siwe';
import { SignInError } from './sign-in-error.ts';

const MAX_MESSAGE_LENGTH = 4_096;

/** The fields of an EIP-4361 message that the verifier checks. */
export interface ParsedSignInMessage {
  scheme?: string;
  domain: string;
  address: Address;
  uri: string;
  version: string;
  chainId: number;
  nonce: string;
  issuedAt: Date;
  expirationTime?: Date;
  notBefore?: Date;
}

/**
 * Parses the text the wallet signed. Refuses ('malformed') anything that is not exactly what
 * viem's createSiweMessage renders from the same fields: viem's parser alone ignores trailing
 * text and accepts lower-case addresses, and the fields we check must be the lines the person saw.
 */
export function parseSignInMessage(message: string): ParsedSignInMessage {
  if (typeof message !== 'string' || message.length === 0 || message.length > MAX_MESSAGE_LENGTH) {
    throw malformed('The sign-in message is missing or too long.');
  }
  const fields = parseSiweMessage(message);
  const { domain, address, uri, version, chainId, nonce, issuedAt } = fields;
  if (!domain || !address || !uri || !version || chainId === undefined || !nonce || !issuedAt) {
    throw malformed('The sign-in message is not an EIP-4361 message: a required line is missing.');
  }
  for (const date of [issuedAt, fields.expirationTime, fields.notBefore]) {
    if (date !== undefined && Number.isNaN(date.getTime())) throw malformed('A time in the sign-in message is not a valid ISO 8601 timestamp.');
  }
  // EIP-4361 requires the EIP-55 checksummed address; a lower-case one is refused, not normalised,
  // because the signed text would then differ from what we would show and record.
  if (address !== getAddress(address)) {
    throw malformed('The address in the sign-in message must be written in its EIP-55 checksummed form.');
  }
  if (render(fields) !== message) {
    throw malformed('The sign-in message is not in the EIP-4361 form the console issues.');
  }
  return { ...fields, domain, address, uri, version, chainId, nonce, issuedAt };
}

function render(fields: ReturnType<typeof parseSiweMessage>): string | undefined {
  try {
    return createSiweMessage(fields as Parameters<typeof createSiweMessage>[0]);
  } catch {
    return undefined;
  }
}

function malformed(message: string): SignInError {
  return new SignInError('malformed', message);
}
