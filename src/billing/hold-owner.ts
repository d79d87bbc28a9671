import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** This process as a hold owner: `host/pid/random`, the random part telling apart a reused pid. */
export function newHoldOwner(): string {
  return `${hostname()}/${process.pid}/${randomBytes(6).toString('hex')}`;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether `owner` is certainly gone: a process of this host that no longer runs, or an earlier
 * process that had our pid. Owners on other hosts are judged by their holds' expiry alone.
 */
export function ownerIsDead(owner: string, self: string): boolean {
  if (owner === self) return false;
  const [host, pidText] = owner.split('/');
  const [selfHost, selfPid] = self.split('/');
  if (host !== selfHost) return false;
  if (pidText === selfPid) return true;
  return !pidAlive(Number(pidText));
}
