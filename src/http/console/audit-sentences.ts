import { parseUsd } from '../../lib/money.ts';
import type { AuditEntry } from '../../storage/records.ts';
import { displayAddress } from './console-json.ts';

type Detail = Record<string, unknown>;

/** An actor as the API shows it: an address checksummed (EIP-55), anything else (`cli`) as it is. */
export function displayActor(actor: string): string {
  return /^0x[0-9a-fA-F]{40}$/.test(actor) ? displayAddress(actor.toLowerCase()) : actor;
}

/** Who did it, in a sentence. */
function subject(actor: string): string {
  return actor === 'cli' ? 'The CLI' : displayActor(actor);
}

/** A USD string of the log as the console's summaries show it: $1,234.50, <$0.01. */
function dollars(value: unknown): string {
  if (typeof value !== 'string') return 'none';
  const nano = parseUsd(value);
  const cents = Math.floor((nano + 5_000_000) / 10_000_000);
  if (cents === 0 && nano > 0) return '<$0.01';
  const whole = String(Math.floor(cents / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `$${whole}.${String(cents % 100).padStart(2, '0')}`;
}

const models = (value: unknown) => (Array.isArray(value) ? value.join(', ') : 'every model');
const rate = (value: unknown) => (typeof value === 'number' ? `${value} requests per minute` : 'the default rate limit');
const daily = (value: unknown) => (typeof value === 'string' ? `${dollars(value)} a day` : 'no daily limit');
const key = (detail: Detail) => `key ${String(detail.prefix ?? detail.keyId ?? '')}`.trim();

/** What changed, "from A to B" for each field that has a before. */
function changes(detail: Detail, show: Record<string, (value: unknown) => string>): string {
  const before = (detail.before ?? {}) as Detail;
  const parts = Object.keys(show)
    .filter((field) => field in before)
    .map((field) => `${labels[field] ?? field} from ${show[field]!(before[field])} to ${show[field]!(detail[field])}`);
  return parts.length
    ? parts.join(', ')
    : Object.keys(show)
        .map((field) => `${labels[field] ?? field} ${show[field]!(detail[field])}`)
        .join(', ');
}

const labels: Record<string, string> = {
  name: 'name',
  models: 'models',
  dailyLimit: 'daily limit',
  rateLimitPerMinute: 'rate limit',
  balanceBelow: 'low-balance alert',
  budgetShare: 'budget alert',
};

const share = (value: unknown) => (typeof value === 'number' ? `${value}% of the budget` : 'off');

/** One sentence per audit entry: who, what, on what, before and after. */
export function auditSentence(entry: AuditEntry): string {
  const who = subject(entry.actor);
  const detail = entry.detail;
  switch (entry.action) {
    case 'key.created':
      return `${who} created ${key(detail)} "${String(detail.name)}" with scopes ${models(detail.scopes)} for ${models(detail.models)}.`;
    case 'key.revoked':
      return `${who} revoked ${key(detail)}.`;
    case 'key.limits':
      return `${who} changed the limits of ${key(detail)}: ${changes(detail, { dailyLimit: daily, rateLimitPerMinute: rate })}.`;
    case 'key.updated':
      return `${who} changed ${key(detail)}: ${changes(detail, { name: (value) => `"${String(value)}"`, models, dailyLimit: daily, rateLimitPerMinute: rate })}.`;
    case 'budget.set': {
      const before = (detail.before ?? {}) as Detail;
      const was =
        before.monthly_budget === undefined
          ? ''
          : before.monthly_budget === null
            ? ' (there was none)'
            : ` (it was ${dollars(before.monthly_budget)})`;
      return detail.monthly_budget === null
        ? `${who} removed the monthly budget${was}.`
        : `${who} set the monthly budget to ${dollars(detail.monthly_budget)}${was}.`;
    }
    case 'alerts.set':
      return `${who} set the alerts: ${changes(detail, { balanceBelow: (value) => (typeof value === 'string' ? `below ${dollars(value)}` : 'off'), budgetShare: share })}.`;
    case 'funds.added':
      return `${who} added ${dollars(detail.amount)} to the balance${detail.note ? ` ("${String(detail.note)}")` : ''}.`;
    case 'rules.set':
      return `${who} set ${String(detail.alias)} to try ${models(detail.candidates)} in that order, reasoning ${String(detail.reasoning)}.`;
    case 'member.owner':
      return `${displayActor(String(detail.address ?? entry.actor))} signed in first and became the owner.`;
    case 'member.added':
      return `${who} added ${displayActor(String(detail.address))} as a member.`;
    case 'member.removed':
      return `${who} removed the member ${displayActor(String(detail.address))}${typeof detail.sessionsEnded === 'number' ? ` and ended ${detail.sessionsEnded} of their sessions` : ''}.`;
    case 'session.signed_in':
      return `${who} signed in as ${String(detail.role ?? 'member')} on chain ${String(detail.chainId ?? '?')}.`;
    default:
      return `${who}: ${entry.action}.`;
  }
}

/** An audit detail with snake_case keys (the API's own style), addresses checksummed. */
export function auditDetail(detail: Detail): Detail {
  const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
  const value = (item: unknown): unknown =>
    typeof item === 'string' && /^0x[0-9a-f]{40}$/.test(item)
      ? displayAddress(item)
      : Array.isArray(item)
        ? item.map(value)
        : item && typeof item === 'object'
          ? auditDetail(item as Detail)
          : item;
  return Object.fromEntries(Object.entries(detail).map(([name, item]) => [snake(name), value(item)]));
}
