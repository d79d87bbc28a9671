import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

export interface Target {
  pool: Pool;
  path: string;
  headers: Record<string, string>;
}

export interface LoadOptions {
  stream: boolean;
  body: string;
  concurrency: number;
  requests: number;
  /** Stop issuing requests after this long, whatever the count. */
  timeLimitMs: number;
}

export interface LoadResult {
  /** Requests that finished, successfully or not. */
  completed: number;
  errors: number;
  /** Up to five distinct failure messages. */
  errorSamples: string[];
  elapsedMs: number;
  timedOut: boolean;
  /** Per successful request, ms: whole response, and (streaming) first body chunk. */
  latencies: Float64Array;
  firstByte: Float64Array;
  /** p50 and p99 when the generator reports only those (wrk), in place of `latencies`. */
  summary?: { p50: number; p99: number };
}

/** A keep-alive pool with one connection per concurrent request. */
export function createPool(origin: string, connections: number): Pool {
  return new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 10_000, bodyTimeout: 10_000 });
}

/** Checks the body; returns the error text, or null when the answer is a good one. */
function checkBody(stream: boolean, text: string): string | null {
  if (stream) return text.trimEnd().endsWith('data: [DONE]') ? null : `stream did not end with data: [DONE]: ...${text.slice(-200)}`;
  try {
    const body = JSON.parse(text) as { object?: unknown; choices?: Array<{ message?: { content?: unknown } }> };
    if (body.object === 'chat.completion' && typeof body.choices?.[0]?.message?.content === 'string') return null;
  } catch {
    // Reported below.
  }
  return `not a chat.completion: ${text.slice(0, 200)}`;
}

/** Runs `requests` requests with `concurrency` in flight; every response is read and checked. */
export async function runLoad(target: Target, options: LoadOptions): Promise<LoadResult> {
  const latencies = new Float64Array(options.requests);
  const firstByte = new Float64Array(options.requests);
  const errorSamples: string[] = [];
  let issued = 0;
  let ok = 0;
  let errors = 0;
  let timedOut = false;
  const started = performance.now();
  const deadline = started + options.timeLimitMs;

  const fail = (message: string) => {
    errors++;
    if (errorSamples.length < 5 && !errorSamples.includes(message)) errorSamples.push(message);
  };

  async function once(): Promise<void> {
    const begin = performance.now();
    const response = await target.pool.request({ method: 'POST', path: target.path, headers: target.headers, body: options.body });
    let first = 0;
    const chunks: Buffer[] = [];
    for await (const chunk of response.body) {
      if (first === 0) first = performance.now();
      chunks.push(chunk as Buffer);
    }
    const end = performance.now();
    const text = Buffer.concat(chunks).toString('utf8');
    if (response.statusCode !== 200) return fail(`HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
    const problem = checkBody(options.stream, text);
    if (problem) return fail(problem);
    latencies[ok] = end - begin;
    firstByte[ok] = first - begin;
    ok++;
  }

  async function worker(): Promise<void> {
    while (issued < options.requests) {
      if (performance.now() > deadline) {
        timedOut = true;
        return;
      }
      issued++;
      try {
        await once();
      } catch (error) {
        fail(`${(error as Error).name}: ${(error as Error).message}`);
      }
    }
  }

  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return {
    completed: ok + errors,
    errors,
    errorSamples,
    elapsedMs: performance.now() - started,
    timedOut,
    latencies: latencies.subarray(0, ok),
    firstByte: firstByte.subarray(0, ok),
  };
}
