import { checksumAddress, loadAddressTools } from '../auth/address-tools.ts';
import type { MemberRecord, MemberRole } from '../storage/records.ts';
import { DEFAULT_ACCOUNT_ID } from '../storage/store.ts';
import { CliError } from './cli-error.ts';
import { report, type CommandContext } from './command-context.ts';
import { displayInstant, formatTable } from './format.ts';
import { didYouMean } from './report-options.ts';

const ROLES: readonly MemberRole[] = ['member', 'owner'];

/** A 0x address in any case, as stored (lower-case); the tools that checksum it are loaded. */
async function parseAddress(text: string): Promise<string> {
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) throw new CliError(`"${text}" is not an address: 0x and 40 hex digits`);
  await loadAddressTools();
  return text.toLowerCase();
}

interface MemberJson {
  address: string;
  role: MemberRole;
  /** Null for console.owner before it first signs in. */
  added_at: string | null;
  added_by: string;
}

function memberToJson(member: MemberRecord): MemberJson {
  return { address: checksumAddress(member.address), role: member.role, added_at: member.addedAt, added_by: member.addedBy };
}

/** `members list`: owner first; console.owner is shown as the owner while it has not signed in yet. */
export async function listMembers(context: CommandContext): Promise<void> {
  await loadAddressTools();
  const members = await context.store.listMembers(DEFAULT_ACCOUNT_ID);
  const configured = context.config.console.owner;
  const pending = configured !== undefined && !members.some((member) => member.role === 'owner');
  const json = members.map(memberToJson);
  if (pending) json.unshift({ address: checksumAddress(configured), role: 'owner', added_at: null, added_by: 'config' });
  report(context, json, () => {
    if (!json.length) return 'No members yet: the first address to sign in to the console owns the workspace (or set console.owner).';
    const rows = json.map((member) => [
      member.address,
      member.role,
      member.added_at ? displayInstant(member.added_at) : 'not signed in yet',
      member.added_by,
    ]);
    return formatTable(['ADDRESS', 'ROLE', 'ADDED', 'ADDED BY'], rows);
  });
}

/** `members add <address> [--role member|owner]`: the CLI acts as the owner; `owner` only while the workspace has none. */
export async function addMember(context: CommandContext): Promise<void> {
  const address = await parseAddress(context.args[0]!);
  const role = (context.options.role ?? 'member') as MemberRole;
  if (!ROLES.includes(role)) throw new CliError(`--role must be member or owner; got "${role}"${didYouMean(role, ROLES)}`);
  const at = context.now.toISOString();
  const members = await context.store.listMembers(DEFAULT_ACCOUNT_ID);
  const existing = members.find((member) => member.address === address);
  const owner = members.find((member) => member.role === 'owner');
  const shown = checksumAddress(address);
  if (existing) {
    if (existing.role !== role && role === 'owner') throw new CliError(`${shown} is a member; the CLI cannot make a member the owner`);
    report(context, memberToJson(existing), () => `${shown} is already ${existing.role === 'owner' ? 'the owner' : 'a member'}.`);
    return;
  }
  let member: MemberRecord | null;
  if (role === 'owner') {
    const configured = context.config.console.owner;
    if (owner) throw new CliError(`${checksumAddress(owner.address)} owns the workspace; the CLI does not transfer ownership`);
    if (configured !== undefined && configured !== address) {
      throw new CliError(`console.owner in the config names ${checksumAddress(configured)}: change it there instead`);
    }
    member = await context.store.claimMembership(DEFAULT_ACCOUNT_ID, address, at);
  } else {
    member = await context.store.addMember(DEFAULT_ACCOUNT_ID, address, 'cli', at);
  }
  if (!member || member.role !== role) throw new CliError(`${shown} could not be added as ${role}; see: gateway members list`);
  report(context, memberToJson(member), () => `Added ${shown} as ${role === 'owner' ? 'the owner' : 'a member'}.`);
}

/** `members remove <address>`: ends its console sessions too; never the owner. */
export async function removeMember(context: CommandContext): Promise<void> {
  const address = await parseAddress(context.args[0]!);
  const members = await context.store.listMembers(DEFAULT_ACCOUNT_ID);
  const shown = checksumAddress(address);
  if (members.some((member) => member.address === address && member.role === 'owner')) {
    throw new CliError(`${shown} owns the workspace and cannot be removed`);
  }
  if (!(await context.store.removeMember(DEFAULT_ACCOUNT_ID, address, 'cli', context.now.toISOString()))) {
    const names = members.map((member) => checksumAddress(member.address));
    throw new CliError(`${shown} is not a member (see: gateway members list)${didYouMean(shown, names)}`);
  }
  report(context, { removed: shown }, () => `Removed ${shown}; its console sessions are ended.`);
}
