import type { PassThrough, PassThroughFormat } from '../canonical/chat-request.ts';

/** Service tiers both formats know by the same name. */
const SHARED_SERVICE_TIERS = new Set(['auto']);

/**
 * Translators of the fields one format has an equivalent for in the other; each returns the
 * target format's fields, or null when the value means nothing there.
 */
const TRANSLATIONS: Record<PassThroughFormat, Record<string, (value: unknown) => Record<string, unknown> | null>> = {
  // Anthropic fields reaching an OpenAI-compatible model.
  anthropic: {
    metadata: (value) => {
      const user = (value as { user_id?: unknown } | null)?.user_id;
      return typeof user === 'string' ? { user } : null;
    },
    service_tier: (value) => (typeof value === 'string' && SHARED_SERVICE_TIERS.has(value) ? { service_tier: value } : null),
  },
  // OpenAI fields reaching an Anthropic model.
  openai: {
    user: (value) => (typeof value === 'string' ? { metadata: { user_id: value } } : null),
    // Anthropic keys its cache by the prefix itself, which the gateway marks (place-cache-breakpoints.ts): nothing to send.
    prompt_cache_key: () => ({}),
    service_tier: (value) => (typeof value === 'string' && SHARED_SERVICE_TIERS.has(value) ? { service_tier: value } : null),
  },
};

/**
 * The pass-through fields a provider of `target` format sends: all of them as the client sent
 * them when it speaks the client's format; otherwise the few with a meaning there, translated,
 * and a warning for each one dropped (so a user can see why a setting had no effect).
 */
export function passThroughFor(
  target: PassThroughFormat,
  passThrough: PassThrough,
  warn: (message: string) => void = () => {},
): Record<string, unknown> {
  if (passThrough.format === target) return passThrough.fields;
  const translated: Record<string, unknown> = {};
  const translations = TRANSLATIONS[passThrough.format];
  for (const [field, value] of Object.entries(passThrough.fields)) {
    const equivalent = translations[field]?.(value) ?? null;
    if (equivalent) Object.assign(translated, equivalent);
    else warn(`${field}: ${passThrough.format === 'openai' ? 'an OpenAI' : 'an Anthropic'} field with no equivalent for this model; dropped`);
  }
  return translated;
}
