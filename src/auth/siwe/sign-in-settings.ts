/** How long a sign-in message is valid after it is issued. */
export const SIGN_IN_VALIDITY_MS = 10 * 60_000;

/** Where the console is served and which chains may sign in; from config, never from a request. */
export interface SignInSettings {
  /** host[:port] the message must name, from config (never from a Host header). */
  domain: string;
  /** scheme://host[:port]; the message's URI must be this origin (or a URL under it). */
  origin: string;
  chainIds: number[];
  /** JSON-RPC URL per chain id, for contract wallets (ERC-1271, ERC-6492). */
  rpcUrls: Record<number, string>;
}

// The forms viem's createSiweMessage accepts (it throws for upper case and for IPv6), so that
// every configured domain can also be written into a message.
const HOST_NAME = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+([a-z]{2,63}|xn--[a-z0-9-]{0,58}[a-z0-9])$/;
const IPV4 = /^((25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)$/;

/** Checks the settings once, at construction; the error names the bad setting. */
export function validateSignInSettings(settings: SignInSettings): SignInSettings {
  const domain = checkDomain(settings.domain);
  const origin = checkOrigin(settings.origin);
  const chainIds = checkChainIds(settings.chainIds);
  const rpcUrls = checkRpcUrls(settings.rpcUrls, chainIds);
  return { domain, origin, chainIds, rpcUrls };
}

function checkDomain(domain: unknown): string {
  if (typeof domain !== 'string' || domain.includes('://') || domain.includes('/')) {
    throw new Error(`Sign-in setting "domain" must be host[:port] without a scheme or path, got ${JSON.stringify(domain)}.`);
  }
  const match = /^(.+?)(?::(\d{1,5}))?$/.exec(domain);
  const host = match?.[1] ?? '';
  const port = match?.[2];
  const hostOk = host === 'localhost' || HOST_NAME.test(host) || IPV4.test(host);
  if (!hostOk || (port !== undefined && (Number(port) < 1 || Number(port) > 65535))) {
    throw new Error(
      `Sign-in setting "domain" must be a lower-case host name, IPv4 address or localhost, with an optional port; got ${JSON.stringify(domain)}.`,
    );
  }
  return domain;
}

function checkOrigin(origin: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof origin === 'string' ? new URL(origin) : undefined;
  } catch {
    url = undefined;
  }
  const plainOrigin = url !== undefined && (url.protocol === 'https:' || url.protocol === 'http:') && url.origin;
  if (!plainOrigin || (origin !== plainOrigin && origin !== `${plainOrigin}/`)) {
    throw new Error(`Sign-in setting "origin" must be an http(s) origin like https://console.example.com, got ${JSON.stringify(origin)}.`);
  }
  return plainOrigin;
}

function checkChainIds(chainIds: unknown): number[] {
  const valid = Array.isArray(chainIds) && chainIds.length > 0 && chainIds.every((id) => Number.isSafeInteger(id) && id > 0);
  if (!valid) throw new Error(`Sign-in setting "chainIds" must be a non-empty list of positive integers, got ${JSON.stringify(chainIds)}.`);
  return [...new Set(chainIds as number[])];
}

function checkRpcUrls(rpcUrls: unknown, chainIds: number[]): Record<number, string> {
  if (rpcUrls === null || typeof rpcUrls !== 'object') throw new Error('Sign-in setting "rpcUrls" must be an object of chain id to URL.');
  const checked: Record<number, string> = {};
  for (const [key, url] of Object.entries(rpcUrls)) {
    const chainId = Number(key);
    if (!chainIds.includes(chainId)) {
      throw new Error(`Sign-in setting "rpcUrls.${key}" is for a chain that is not in "chainIds" (${chainIds.join(', ')}).`);
    }
    if (typeof url !== 'string' || !/^https?:\/\/[^/]/.test(url) || !URL.canParse(url)) {
      throw new Error(`Sign-in setting "rpcUrls.${key}" must be an http(s) URL, got ${JSON.stringify(url)}.`);
    }
    checked[chainId] = url;
  }
  return checked;
}
