import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { LoadResult } from './load.ts';

const run = promisify(execFile);
let runs = 0;

/**
 * `connections` POSTs of `body` in flight to `url` with `key`, for `seconds`, by wrk on one
 * thread: a load generator that spends a third or less of the CPU per request that this
 * process's undici loop does, which matters where it shares the cores with what it measures.
 * Latencies come as wrk's p50 and p99 (`summary`), not as every request's.
 */
export async function runWrk(url: string, key: string, body: string, connections: number, seconds: number): Promise<LoadResult> {
  // A file of its own: wrk reads it once it has started, when another run may be writing a shared one.
  const bodyFile = join(tmpdir(), `wrk-body-${process.pid}-${++runs}.json`);
  writeFileSync(bodyFile, body);
  let stdout: string;
  try {
    ({ stdout } = await run(
      'wrk',
      ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', resolve('bench/wrk-post.lua'), `${url}/v1/chat/completions`],
      { env: { ...process.env, WRK_BODY_FILE: bodyFile, WRK_KEY: key } },
    ));
  } finally {
    rmSync(bodyFile, { force: true });
  }
  const line = stdout.split('\n').find((entry) => entry.startsWith('WRK '));
  if (!line) throw new Error(`wrk printed no summary: ${stdout.slice(0, 500)}`);
  const counted = JSON.parse(line.slice(4)) as {
    requests: number;
    durationUs: number;
    status: number;
    socket: number;
    p50Us: number;
    p99Us: number;
    sample: string;
  };
  const errors = counted.status + counted.socket;
  return {
    completed: counted.requests,
    errors,
    errorSamples: errors > 0 ? [`wrk: ${counted.status} answers not 2xx or 3xx, ${counted.socket} socket errors; first: ${counted.sample}`] : [],
    elapsedMs: counted.durationUs / 1000,
    timedOut: false,
    latencies: new Float64Array(0),
    firstByte: new Float64Array(0),
    summary: { p50: counted.p50Us / 1000, p99: counted.p99Us / 1000 },
  };
}
