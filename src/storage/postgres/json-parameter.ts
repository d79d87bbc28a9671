// jsonb refuses the NUL character that SQLite's TEXT keeps; a provider's error text may hold one.
function withoutNul(_key: string, value: unknown): unknown {
  return typeof value === 'string' && value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value;
}

/** JSON for a jsonb parameter: pg would turn a JS array into a PostgreSQL array, not JSON. */
export function jsonParameter(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value, withoutNul);
}
