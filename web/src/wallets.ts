import { createStore, type EIP6963ProviderDetail } from 'mipd';
import { api, ApiError, setCsrfToken, type SessionInfo } from './api.ts';

/** Every wallet that announces itself through EIP-6963, as it appears. */
export const walletStore = createStore();

export type Wallet = EIP6963ProviderDetail;

const LAST_WALLET = 'svc.console.wallet';

function toHex(text: string): string {
  let hex = '0x';
  for (const byte of new TextEncoder().encode(text)) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** A wallet's refusal or failure, in words a person understands. */
export function walletErrorText(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  if (code === 4001) return 'You declined the request in your wallet. Nothing was signed.';
  if (code === 4100) return 'The wallet has not authorised this site. Unlock it and allow the connection, then try again.';
  if (code === -32002) return 'Your wallet already has a request open. Finish or dismiss it in the wallet, then try again.';
  return `The wallet could not complete the request${(error as Error)?.message ? ` (${(error as Error).message})` : ''}.`;
}

const CHAIN_NAMES: Record<number, string> = {
  1: 'Ethereum',
  10: 'OP Mainnet',
  137: 'Polygon',
  8453: 'Base',
  42161: 'Arbitrum One',
  11155111: 'Sepolia',
};

/** A chain as people know it: "Base (chain 8453)". */
export function chainName(chainId: number): string {
  return CHAIN_NAMES[chainId] ? `${CHAIN_NAMES[chainId]} (chain ${chainId})` : `chain ${chainId}`;
}

/** A sign-in refused because the wallet is on a chain the console does not accept: the page offers to switch. */
export class WrongChainError extends Error {
  constructor(
    message: string,
    readonly chainId: number,
  ) {
    super(message);
  }
}

/** Asks the wallet to move to `chainId` (EIP-3326); the person confirms it in the wallet. */
export async function switchChain(wallet: Wallet, chainId: number): Promise<void> {
  try {
    await wallet.provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: `0x${chainId.toString(16)}` }] } as never);
  } catch (error) {
    throw new Error(walletErrorText(error), { cause: error });
  }
}

/** What the server's refusal means for the person signing in. */
export function signInErrorText(error: ApiError, address: string, chainId: number): string {
  if (error.code === 'not_a_member')
    return `The wallet ${address} is not a member of this workspace. Ask the workspace owner to add this address, then sign in again.`;
  if (error.code === 'sign_in_refused') {
    switch (error.param) {
      case 'expired':
      case 'unknown_nonce':
        return 'This sign-in request expired or was already used. Start again: the new request is valid for 10 minutes.';
      case 'wrong_chain':
        return `Your wallet is on ${chainName(chainId)}, which this console does not accept. Switch the wallet's network, then sign in again.`;
      case 'bad_signature':
        return 'The signature does not match this wallet. If it is a smart-contract wallet, its owner must sign.';
      case 'rpc_unavailable':
        return 'This smart-contract wallet cannot be checked right now: the chain cannot be reached. Try again later, or sign in with another wallet.';
      case 'issued_in_future':
        return "This computer's clock is ahead of the gateway's. Correct the time and try again.";
      default:
        return `The gateway refused the sign-in: ${error.message}`;
    }
  }
  if (error.code === 'invalid_request' && error.param === 'chain_id')
    return `Your wallet is on ${chainName(chainId)}, which this console does not accept. Switch the wallet's network, then sign in again.`;
  return error.message;
}

/** The account a wallet offers, asking for access when needed. */
export async function requestAccount(wallet: Wallet): Promise<string> {
  const accounts = (await wallet.provider.request({ method: 'eth_requestAccounts' })) as string[];
  if (!accounts[0]) throw Object.assign(new Error('The wallet offered no account.'), { code: 4100 });
  return accounts[0];
}

/**
 * Sign in with a wallet: its account, a nonce and the message from the gateway, the wallet's
 * signature over that message unchanged (personal_sign), and the gateway's verification.
 */
export async function signInWith(wallet: Wallet): Promise<SessionInfo> {
  let address: string;
  let chainId: number;
  try {
    address = await requestAccount(wallet);
    chainId = Number.parseInt((await wallet.provider.request({ method: 'eth_chainId' })) as string, 16);
  } catch (error) {
    throw new Error(walletErrorText(error), { cause: error });
  }
  let session: SessionInfo;
  try {
    const { message } = await api<{ message: string }>('POST', '/sign-in/nonce', { address, chain_id: chainId });
    let signature: string;
    try {
      signature = (await wallet.provider.request({
        method: 'personal_sign',
        params: [toHex(message) as `0x${string}`, address as `0x${string}`],
      })) as string;
    } catch (error) {
      throw new Error(walletErrorText(error), { cause: error });
    }
    session = await api<SessionInfo>('POST', '/sign-in', { message, signature });
  } catch (error) {
    if (error instanceof ApiError) {
      const text = signInErrorText(error, address, chainId);
      const wrongChain = error.param === 'wrong_chain' || (error.code === 'invalid_request' && error.param === 'chain_id');
      throw wrongChain ? new WrongChainError(text, chainId) : new Error(text, { cause: error });
    }
    throw error;
  }
  setCsrfToken(session.csrf_token);
  localStorage.setItem(LAST_WALLET, wallet.info.rdns);
  return session;
}

/** The wallet last used to sign in, once it has announced itself again. */
export function lastWallet(): Wallet | undefined {
  const rdns = localStorage.getItem(LAST_WALLET);
  return walletStore.getProviders().find((wallet) => wallet.info.rdns === rdns);
}
