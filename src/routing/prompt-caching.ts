import { createHash } from 'node:crypto';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { GatewayConfig } from '../config/schema.ts';
import type { ApiKeyRecord } from '../storage/records.ts';

/**
 * Whether the gateway places prompt-cache breakpoints on a request of `key` served through
 * `alias` (place-cache-breakpoints.ts): the key's own setting (by id or display prefix), else the
 * alias's, else `prompt_caching.automatic`.
 */
export function automaticCachingFor(
  config: Pick<GatewayConfig, 'promptCaching' | 'aliases'>,
  key: Pick<ApiKeyRecord, 'id' | 'prefix'>,
  alias: string | undefined,
): boolean {
  const keys = config.promptCaching.keys;
  return keys[key.id] ?? keys[key.prefix] ?? (alias ? config.aliases[alias]?.promptCaching : undefined) ?? config.promptCaching.automatic;
}

/** Characters of each opening message a conversation is known by: enough to tell two apart, cheap on a prompt of megabytes. */
const OPENING_CHARACTERS = 4_096;

/**
 * A stable name of one conversation of one key, for providers that route requests by a cache key
 * (OpenAI's prompt_cache_key): a hash of the key's id and the conversation's opening (its system
 * and developer messages and its first user message), which every later turn repeats. Never the
 * key itself, nor anything readable.
 */
export function promptCacheKeyFor(keyId: string, request: ChatRequest): string {
  const hash = createHash('sha256').update(keyId);
  for (const message of request.messages) {
    if (message.role === 'system' || message.role === 'developer') hash.update(`\0${message.role}\0${message.content.slice(0, OPENING_CHARACTERS)}`);
    else if (message.role === 'user') {
      for (const part of message.content)
        hash.update(`\0user\0${part.type === 'text' ? part.text.slice(0, OPENING_CHARACTERS) : part.url.slice(0, OPENING_CHARACTERS)}`);
      break;
    } else break;
  }
  return `svc-${hash.digest('hex').slice(0, 32)}`;
}
