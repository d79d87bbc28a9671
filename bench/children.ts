import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface Child<Info> {
  process: ChildProcess;
  info: Info;
}

const running = new Set<ChildProcess>();

/**
 * Starts `node [nodeArgs] --import tsx <script> [args]` (a compiled `.js` script without tsx) and
 * resolves with the JSON line it prints first on stdout. Its stdin stays a pipe: the child exits
 * when this process does.
 */
export async function startChild<Info>(
  script: string,
  args: string[],
  nodeArgs: string[] = [],
  timeoutMs = 20_000,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Child<Info>> {
  const loader = script.endsWith('.js') ? [] : ['--import', 'tsx'];
  const child = spawn(process.execPath, [...nodeArgs, ...loader, script, ...args], {
    cwd: process.cwd(),
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const lines = createInterface({ input: child.stdout! });
  try {
    const info = await new Promise<Info>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${script} did not start within ${timeoutMs} ms`)), timeoutMs);
      child.once('exit', (code, signal) => reject(new Error(`${script} exited (${signal ?? code}) before it was ready`)));
      child.once('error', reject);
      lines.once('line', (line) => {
        clearTimeout(timer);
        try {
          resolve(JSON.parse(line) as Info);
        } catch {
          reject(new Error(`${script} printed "${line}" instead of its JSON line`));
        }
      });
    });
    return { process: child, info };
  } catch (error) {
    await stopChild(child);
    throw error;
  } finally {
    // Keep draining stdout so a chatty child never blocks on a full pipe.
    lines.on('line', () => {});
  }
}

/** SIGTERM, then SIGKILL if the child is still there after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export async function stopAllChildren(): Promise<void> {
  await Promise.all([...running].map((child) => stopChild(child)));
}

/** Kernel clock ticks per second, for /proc times. */
export const CLOCK_TICKS = Number(execSync('getconf CLK_TCK').toString().trim());

/** CPU time (user + system, all threads) a process has used so far, in ms; `self` for this process. */
export function cpuMs(pid: number | 'self', withEndedChildren = false): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after "(comm)": state is field 3, utime field 14, stime field 15; cutime and cstime
  // (children that ended and were waited for: a wrk run) 16 and 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]) + (withEndedChildren ? Number(fields[13]) + Number(fields[14]) : 0);
  return (ticks * 1000) / CLOCK_TICKS;
}

interface CpuTime {
  /** Not idle or waiting for I/O, in ms. */
  busy: number;
  total: number;
}

/** The whole machine's CPU so far (from /proc/stat), in ms, and each core's (`cores[n]`: cpu n). */
export function machineCpuMs(): CpuTime & { cores: CpuTime[] } {
  const [machine, ...cores] = readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((line) => /^cpu\d* /.test(line))
    .map((line) => {
      const fields = line.trim().split(/\s+/).slice(1, 9).map(Number);
      const total = fields.reduce((sum, value) => sum + value, 0);
      const idle = fields[3]! + fields[4]!;
      return { busy: ((total - idle) * 1000) / CLOCK_TICKS, total: (total * 1000) / CLOCK_TICKS };
    });
  return { ...machine!, cores };
}
