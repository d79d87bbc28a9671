// jsonb refuses the NUL character that SQLite's TEXT keeps; a provider's error text may hold one.
function withoutNul(_key: string, value: unknown): unknown {
  return typeof value === 'string' && value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value;
}

/**
 * `value` as JSON text for a jsonb parameter, each NUL in its strings replaced by U+FFFD.
 * JSON.stringify writes a NUL as the six characters \u0000, so text without them has none and is
 * used as it is; only text with them (a NUL, or a string that spells out "\u0000" itself) is
 * written again with the replacer, which costs a receipt ~2-3 µs more when run on every one.
 */
export function jsonText(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes('\\u0000') ? JSON.stringify(value, withoutNul) : text;
}

/** JSON for a jsonb parameter: pg would turn a JS array into a PostgreSQL array, not JSON. */
export function jsonParameter(value: unknown): string | null {
  return value === null || value === undefined ? null : jsonText(value);
}
