/**
 * viem's address checksum, loaded when the console is first used rather than at start (viem
 * is ~25 MiB): the console API loads it before any of its handlers runs (console-api.ts).
 */
type Viem = typeof import('viem');
let viem: Viem | null = null;

export async function loadAddressTools(): Promise<void> {
  viem ??= await import('viem');
}

/** EIP-55 checksummed form of an address; loadAddressTools must have resolved. */
export function checksumAddress(address: string): string {
  if (!viem) throw new Error('address tools are not loaded: await loadAddressTools() first');
  return viem.getAddress(address);
}
