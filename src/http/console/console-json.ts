import { checksumAddress } from '../../auth/address-tools.ts';
import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.ts';
import { parseUsd } from '../../lib/money.ts';
import type { MemberRecord } from '../../storage/records.ts';

/** A console body or query, validated; invalid_request names the field. */
export function parseWith<T extends z.ZodTypeAny>(schema: T, value: unknown): z.output<T> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.join('.');
  throw new GatewayError('invalid_request', field ? `${field}: ${issue.message}` : issue.message, {}, field || null);
}

/** A 0x address in any case, as its lower-case storage form. */
export const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x address of 40 hex digits')
  .transform((value) => value.toLowerCase());

/** A USD decimal string as integer nano-USD. */
export const usd = z.string().transform((value, context) => {
  try {
    return parseUsd(value);
  } catch (error) {
    context.addIssue({ code: z.ZodIssueCode.custom, message: (error as Error).message });
    return z.NEVER;
  }
});

/** How people see an address: EIP-55 checksummed. */
export function displayAddress(lowerCase: string): string {
  return checksumAddress(lowerCase);
}

export function renderMember(member: MemberRecord) {
  return { address: displayAddress(member.address), role: member.role, added_at: member.addedAt, added_by: member.addedBy };
}
