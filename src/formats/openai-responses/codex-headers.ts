import type { IncomingHttpHeaders } from 'node:http';

/**
 * The headers Codex sends for its own turns (its turn state and metadata, window, session and
 * thread ids, its name and request id), which an OpenAI-kind provider may read: forwarded to
 * those as sent, never to other kinds. Codex's `openai-beta` value names the gateway's own
 * transport and goes nowhere.
 */
const CODEX_HEADER = /^(?:x-codex-[a-z0-9-]+|session[-_]id|thread-id|originator|x-client-request-id)$/;

/** Codex's own headers among `headers`; undefined when there are none. */
export function codexHeaders(headers: IncomingHttpHeaders): Record<string, string> | undefined {
  let found: Record<string, string> | undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string' && CODEX_HEADER.test(name)) (found ??= {})[name] = value;
  }
  return found;
}

/**
 * Over the Responses socket, Codex sends the headers of each turn in the frame's
 * `client_metadata` (the upgrade's are those of its first frame): these win.
 */
export function turnHeaders(upgrade: IncomingHttpHeaders, frame: Record<string, unknown>): IncomingHttpHeaders {
  const metadata = frame.client_metadata;
  if (typeof metadata !== 'object' || metadata === null) return upgrade;
  const turn: IncomingHttpHeaders = { ...upgrade };
  for (const [name, value] of Object.entries(metadata)) {
    const lower = name.toLowerCase();
    if (typeof value === 'string' && lower.startsWith('x-codex-')) turn[lower] = value;
  }
  return turn;
}
