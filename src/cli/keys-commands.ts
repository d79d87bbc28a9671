import { issueApiKey } from '../auth/issue-api-key.ts';
import { DEFAULT_ACCOUNT_ID } from '../storage/store.ts';
import { formatUsd } from '../lib/money.ts';
import type { ApiKeyRecord } from '../storage/records.ts';
import { CliError } from './cli-error.ts';
import { report, type CommandContext } from './command-context.ts';
import { displayInstant, displayUsd, formatTable } from './format.ts';
import { parseDailyLimit, parseExpiry, parseModels, parseRateLimit, parseScopes } from './key-options.ts';

function keyStatus(key: ApiKeyRecord, now: Date): 'active' | 'revoked' | 'expired' {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && Date.parse(key.expiresAt) <= now.getTime()) return 'expired';
  return 'active';
}

/** The public view of a key: never its hash. */
function keyToJson(key: ApiKeyRecord, now: Date) {
  return {
    id: key.id,
    prefix: key.prefix,
    name: key.name,
    scopes: key.scopes,
    models: key.models,
    daily_limit: key.dailyLimitNano === null ? null : formatUsd(key.dailyLimitNano),
    rate_limit_per_minute: key.rateLimitPerMinute,
    status: keyStatus(key, now),
    expires_at: key.expiresAt,
    revoked_at: key.revokedAt,
    last_used_at: key.lastUsedAt,
    created_at: key.createdAt,
  };
}

/** `keys create`: validate every option before minting, store only the hash, show the key once. */
export async function createKey(context: CommandContext): Promise<void> {
  const { options, config, now } = context;
  const name = (options.name ?? 'unnamed').trim();
  if (!name) throw new CliError('--name must not be empty');
  const scopes = parseScopes(options.scopes);
  const models = parseModels(options.models, config);
  const dailyLimitNano = parseDailyLimit(options['daily-limit']);
  const rateLimitPerMinute = parseRateLimit(options['rate-limit']);
  const expiresAt = parseExpiry(options.expires, now);

  const { key, record } = await issueApiKey(context.store, {
    name,
    scopes,
    models,
    dailyLimitNano,
    rateLimitPerMinute,
    expiresAt,
    now,
    actor: 'cli',
  });

  const json = {
    key,
    id: record.id,
    prefix: record.prefix,
    name,
    scopes,
    models,
    daily_limit: dailyLimitNano === null ? null : formatUsd(dailyLimitNano),
    rate_limit_per_minute: rateLimitPerMinute,
    expires_at: expiresAt,
  };
  report(context, json, () =>
    [
      `Created key ${record.id} "${name}"`,
      `  scopes:      ${scopes.join(', ')}`,
      `  models:      ${models ? models.join(', ') : 'all'}`,
      `  daily limit: ${dailyLimitNano === null ? 'none' : displayUsd(dailyLimitNano)}`,
      `  rate limit:  ${rateLimitPerMinute === null ? 'default' : `${rateLimitPerMinute}/min`}`,
      `  expires:     ${expiresAt ?? 'never'}`,
      '',
      `  ${key}`,
      '',
      'Copy this key now: it is not shown again. The gateway keeps only its hash.',
    ].join('\n'),
  );
}

export async function listKeys(context: CommandContext): Promise<void> {
  const keys = await context.store.listKeys(DEFAULT_ACCOUNT_ID);
  report(
    context,
    keys.map((key) => keyToJson(key, context.now)),
    () => {
      if (!keys.length) return 'No keys yet. Create one with: gateway keys create --name <name>';
      const rows = keys.map((key) => [
        key.id,
        key.prefix,
        key.name,
        key.scopes.join(','),
        key.models ? key.models.join(',') : 'all',
        key.dailyLimitNano === null ? '-' : displayUsd(key.dailyLimitNano),
        keyStatus(key, context.now),
        displayInstant(key.lastUsedAt),
        displayInstant(key.createdAt),
      ]);
      return formatTable(['ID', 'PREFIX', 'NAME', 'SCOPES', 'MODELS', 'DAILY LIMIT', 'STATUS', 'LAST USED', 'CREATED'], rows);
    },
  );
}

export async function revokeKey(context: CommandContext): Promise<void> {
  const [idOrPrefix] = context.args;
  const key = await context.store.revokeKey(DEFAULT_ACCOUNT_ID, idOrPrefix!, context.now.toISOString(), 'cli');
  if (!key) throw new CliError(`no active key matches "${idOrPrefix}" (see: gateway keys list)`);
  report(context, keyToJson(key, context.now), () => `Revoked key ${key.id} (${key.prefix}) "${key.name}".`);
}
