/** The console API client: same-origin fetch with the session cookie, the CSRF token on changes, the error envelope as ApiError. */

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly param: string | null,
  ) {
    super(message);
  }

  /** The message without the "field: " the gateway starts it with when it names a field, for showing beside that field. */
  get fieldMessage(): string {
    return this.param && this.message.startsWith(`${this.param}: `) ? this.message.slice(this.param.length + 2) : this.message;
  }

  /** Whether trying the same again may work: the gateway was unreachable or failed, not a refusal. */
  get retryable(): boolean {
    return this.status === 0 || this.status >= 500;
  }
}

let csrfToken: string | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Dispatched on window when a signed-in call finds the session ended (signed out elsewhere, expired, member removed). */
export const SESSION_ENDED = 'console:session-ended';

export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(`/console/api${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError('The gateway cannot be reached. Check that it is running, then try again.', 0, 'network', null);
  }
  const text = await response.text();
  let parsed: any;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    throw new ApiError(`The gateway answered something unexpected (HTTP ${response.status}).`, response.status, 'invalid_response', null);
  }
  if (!response.ok) {
    const error = parsed?.error ?? {};
    const failure = new ApiError(error.message ?? `HTTP ${response.status}`, response.status, error.code ?? 'unknown', error.param ?? null);
    if (failure.code === 'session_required' && csrfToken !== null) dispatchEvent(new CustomEvent(SESSION_ENDED));
    throw failure;
  }
  return parsed as T;
}

export interface SessionInfo {
  address: string;
  role: 'owner' | 'member';
  csrf_token: string;
  expires_at: string;
}
