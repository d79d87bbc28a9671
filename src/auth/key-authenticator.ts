import { GatewayError } from '../errors/gateway-error.ts';
import type { ApiKeyRecord, Scope } from '../storage/records.ts';
import type { KeyStore } from '../storage/key-store.ts';
import { VersionedCache } from '../cache/versioned-cache.ts';
import { hashApiKey, isWellFormedApiKey } from './api-key-format.ts';

const MAX_CACHED = 10_000;

/** How many header lines of a request's raw headers (name, value, name, value...) are named `name`. */
function linesNamed(rawHeaders: readonly string[], name: string): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) if (rawHeaders[index]!.toLowerCase() === name) count++;
  return count;
}

/**
 * The key sent as `Authorization: Bearer <key>` or `x-api-key`, or null when neither is there.
 * Two credentials that disagree (two Authorization lines: Node keeps the first and drops the
 * other, so `rawHeaders` tells; one joined with a comma; an Authorization and an x-api-key naming
 * different keys) are refused: a proxy in front may have added one, and guessing which was meant
 * could bill the wrong key.
 */
export function presentedKey(headers: Record<string, string | string[] | undefined>, rawHeaders: readonly string[] = []): string | null {
  const authorization = headers.authorization;
  const apiKeyHeader = headers['x-api-key'];
  if (
    Array.isArray(authorization) ||
    Array.isArray(apiKeyHeader) ||
    (typeof authorization === 'string' && authorization.includes(',')) ||
    linesNamed(rawHeaders, 'authorization') > 1 ||
    linesNamed(rawHeaders, 'x-api-key') > 1
  ) {
    throw new GatewayError('invalid_api_key', 'Send one API key: the request carries more than one credential.');
  }
  let bearer: string | null = null;
  if (typeof authorization === 'string' && authorization !== '') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw new GatewayError('invalid_api_key', 'The Authorization header must be "Bearer <API_KEY>".');
    bearer = match[1]!;
  }
  const apiKey = typeof apiKeyHeader === 'string' && apiKeyHeader !== '' ? apiKeyHeader.trim() : null;
  if (bearer !== null && apiKey !== null && bearer !== apiKey) {
    throw new GatewayError('invalid_api_key', 'Send one API key: Authorization and x-api-key carry different keys.');
  }
  return bearer ?? apiKey;
}

/**
 * Verifies API keys. Warm lookups are served from memory; the cache is dropped whenever the
 * store says keys may have changed elsewhere (a revocation from the CLI or another process),
 * so a revocation takes effect on the very next request.
 */
export class KeyAuthenticator {
  // A record read while keys were at one version is never cached under a later one, so a slow
  // read that began before a revocation cannot bring the revoked key back.
  private readonly cache = new VersionedCache<ApiKeyRecord | null>(MAX_CACHED);

  /** `changeTokenOf` moves whenever keys change in any process (see open-shared-state.ts). */
  constructor(
    private readonly store: KeyStore,
    private readonly changeTokenOf: () => Promise<unknown>,
  ) {}

  /** The keys (and rules) change version the last request saw. */
  get version(): string | undefined {
    return this.cache.version;
  }

  /**
   * `rawHeaders` (Node's request.rawHeaders) shows header lines Node drops from `headers`, a second Authorization.
   *
   * `early`, when given, is called with the cached record of a key valid at the last version seen,
   * in the same turn as the version read starts: work it starts on the same connection (the rate
   * limit's Redis script) shares that read's round trip. Whether the record stands is decided by
   * the version read as always; the caller compares the key returned with the one it was given.
   */
  async authenticate(
    headers: Record<string, string | string[] | undefined>,
    rawHeaders: readonly string[] = [],
    now = Date.now(),
    early?: (key: ApiKeyRecord) => void,
  ): Promise<ApiKeyRecord> {
    const key = presentedKey(headers, rawHeaders);
    if (key === null) throw new GatewayError('invalid_api_key', 'No API key: send Authorization: Bearer <API_KEY>.');
    if (!isWellFormedApiKey(key)) throw new GatewayError('invalid_api_key', 'The API key is malformed; keys start with svc_.');

    const hash = hashApiKey(key);
    const cached = early ? this.cache.get(hash) : undefined;
    if (cached && !cached.revokedAt && !(cached.expiresAt && Date.parse(cached.expiresAt) <= now)) early!(cached);
    const version = String(await this.changeTokenOf());
    this.cache.observe(version);
    let record = this.cache.get(hash);
    if (record === undefined) {
      record = await this.store.findKeyByHash(hash);
      this.cache.set(hash, record, version);
    }
    if (!record) throw new GatewayError('invalid_api_key', 'The API key is not known.');
    if (record.revokedAt) throw new GatewayError('key_revoked', 'The API key was revoked.');
    if (record.expiresAt && Date.parse(record.expiresAt) <= now) {
      throw new GatewayError('key_expired', `The API key expired at ${record.expiresAt}.`);
    }
    return record;
  }
}

export function requireScope(key: ApiKeyRecord, scope: Scope): void {
  if (!key.scopes.includes(scope)) {
    throw new GatewayError('insufficient_scope', `This key lacks the ${scope} scope.`);
  }
}

/** The allow-list compares the model string sent: an allowed alias does not allow its model ids. */
export function requireModelAllowed(key: ApiKeyRecord, model: string): void {
  if (!keyAllowsModel(key, model)) {
    throw new GatewayError('model_not_allowed', `This key may not use model "${model}".`);
  }
}

export function keyAllowsModel(key: ApiKeyRecord, model: string): boolean {
  return key.models === null || key.models.includes(model);
}
