import {
  BaseError,
  createPublicClient,
  hashMessage,
  http,
  HttpRequestError,
  TimeoutError,
  verifyMessage,
  type Address,
  type Hex,
  type PublicClient,
  type Transport,
} from 'viem';
import { getChainId, verifyHash } from 'viem/actions';
import { SignInError } from './sign-in-error.ts';

/** A dead RPC must fail fast: one try, this long at most per request. */
export const RPC_TIMEOUT_MS = 5_000;

// JSON-RPC codes that mean "the node did not answer the question", not "the contract said no":
// limit exceeded, resource unavailable, method not found / not supported, HTTP-style 429, QuickNode's rate limit.
const UNAVAILABLE_RPC_CODES = new Set([-32005, -32002, -32601, -32004, 429, -32007]);

export interface SignatureToCheck {
  address: Address;
  chainId: number;
  message: string;
  signature: Hex;
}

/**
 * Checks a personal_sign signature: locally for EOAs (no RPC), else on chain through viem's
 * ERC-6492 universal validator (ERC-1271 deployed wallets, ERC-6492 undeployed ones).
 * viem's own verifyHash turns an unreachable RPC into `false`, so each request is observed
 * here to tell "RPC unreachable" (rpc_unavailable) from "the contract said no" (bad_signature).
 */
export class SignatureChecker {
  private readonly chainsConfirmed = new Set<number>();

  constructor(
    private readonly rpcUrls: Record<number, string>,
    private readonly timeoutMs = RPC_TIMEOUT_MS,
  ) {}

  async check(input: SignatureToCheck): Promise<void> {
    if (await isEoaSignature(input)) return;
    const url = this.rpcUrls[input.chainId];
    if (url === undefined) {
      throw new SignInError(
        'bad_signature',
        `The signature does not match ${input.address}, and contract wallets cannot be checked on chain ${input.chainId}.`,
      );
    }
    const observed = observedClient(url, this.timeoutMs);
    let valid: boolean;
    try {
      await this.confirmChain(observed.client, input.chainId);
      valid = await verifyHash(observed.client, { address: input.address, hash: hashMessage(input.message), signature: input.signature });
    } catch (error) {
      if (error instanceof SignInError) throw error;
      valid = false;
    }
    if (observed.failure() !== undefined) {
      throw new SignInError(
        'rpc_unavailable',
        `The wallet ${input.address} is a contract wallet and the blockchain node for chain ${input.chainId} cannot be reached to check its signature; please try again shortly.`,
        { cause: observed.failure() },
      );
    }
    if (!valid) throw new SignInError('bad_signature', `The signature was not made by ${input.address} or by a key its wallet accepts.`);
  }

  // An RPC URL pointing at another chain would check the signature against the wrong contract.
  private async confirmChain(client: PublicClient, chainId: number): Promise<void> {
    if (this.chainsConfirmed.has(chainId)) return;
    const served = await getChainId(client);
    if (served !== chainId) {
      throw new SignInError(
        'rpc_unavailable',
        `The blockchain node configured for chain ${chainId} serves chain ${served}, so contract wallets cannot be checked; the gateway's configuration needs fixing.`,
      );
    }
    this.chainsConfirmed.add(chainId);
  }
}

async function isEoaSignature({ address, message, signature }: SignatureToCheck): Promise<boolean> {
  try {
    return await verifyMessage({ address, message, signature });
  } catch {
    return false; // not a 65-byte ECDSA signature: a contract wallet's, or garbage
  }
}

/** A client over one http transport (no retries, short timeout) that remembers transport failures. */
function observedClient(url: string, timeoutMs: number): { client: PublicClient; failure: () => unknown } {
  let failure: unknown;
  const inner = http(url, { retryCount: 0, timeout: timeoutMs });
  const transport: Transport = (parameters) => {
    const built = inner({ ...parameters, retryCount: 0 });
    const request: typeof built.request = async (args, options) => {
      try {
        return await built.request(args, options);
      } catch (error) {
        if (isUnavailable(error)) failure ??= error;
        throw error;
      }
    };
    return { ...built, request };
  };
  return { client: createPublicClient({ transport }), failure: () => failure };
}

function isUnavailable(error: unknown): boolean {
  if (!(error instanceof BaseError)) return true;
  if (error.walk((cause) => cause instanceof HttpRequestError || cause instanceof TimeoutError)) return true;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' && UNAVAILABLE_RPC_CODES.has(code);
}
