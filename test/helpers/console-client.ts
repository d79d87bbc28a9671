import assert from 'node:assert/strict';
import type { PrivateKeyAccount } from 'viem/accounts';

export interface Session {
  cookie: string;
  csrf: string;
  address: string;
  role: string;
}

export async function json<T = any>(response: Response): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`not JSON (${response.status}): ${text}`);
  }
}

/** A console client speaking from the console's own origin (the gateway at `origin`). */
export function consoleClient(origin: string) {
  const call = (method: string, path: string, options: { body?: unknown; session?: Session; headers?: Record<string, string> } = {}) =>
    fetch(`${origin}/console/api${path}`, {
      method,
      headers: {
        origin,
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(options.session ? { cookie: options.session.cookie, 'x-csrf-token': options.session.csrf } : {}),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  return {
    call,
    async nonce(address: string): Promise<{ nonce: string; message: string; issued_at: string }> {
      const response = await call('POST', '/sign-in/nonce', { body: { address } });
      assert.equal(response.status, 200);
      return json(response);
    },
    async signInWith(message: string, signature: string): Promise<Response> {
      return call('POST', '/sign-in', { body: { message, signature } });
    },
    /** Full sign-in: nonce, the message signed unchanged, verification. */
    async signIn(account: PrivateKeyAccount): Promise<Session> {
      const { message } = await this.nonce(account.address);
      const response = await this.signInWith(message, await account.signMessage({ message }));
      const body = await json(response);
      assert.equal(response.status, 200, JSON.stringify(body));
      const setCookie = response.headers.getSetCookie()[0]!;
      return { cookie: setCookie.split(';')[0]!, csrf: body.csrf_token, address: body.address, role: body.role };
    },
  };
}
