/**
 * Multi-megabyte prompts against a gateway in its own process: how long until each is refused
 * (too large for fast/echo's 128K tokens) or admitted (fast/vast has room), and how much slower
 * small requests sent meanwhile get. `npm run bench:huge`; BENCH_HUGE_MIB sets the size (5).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChild, stopAllChildren } from './children.ts';

const SIZE = Number(process.env.BENCH_HUGE_MIB ?? 5) * 1024 * 1024;

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function promptOf(pick: (next: () => number) => string): string {
  const next = seeded(42);
  const parts: string[] = [];
  let bytes = 0;
  while (bytes < SIZE) {
    const piece = pick(next);
    parts.push(piece);
    bytes += Buffer.byteLength(piece);
  }
  return parts.join('');
}

const PROMPTS: Array<[string, () => string]> = [
  ['one character', () => 'a'.repeat(SIZE)],
  ['random code points', () => promptOf((next) => String.fromCodePoint(0x20 + Math.floor(next() * 0xd7d0)))],
  ['emoji', () => promptOf((next) => String.fromCodePoint(0x1f300 + Math.floor(next() * 0x2ff)))],
  ['CJK', () => promptOf((next) => String.fromCharCode(0x4e00 + Math.floor(next() * 20_000)))],
  ['mixed whitespace', () => promptOf((next) => ' \t\n\r'[Math.floor(next() * 4)]!)],
  ['spaces', () => ' '.repeat(SIZE)],
  ['English', () => promptOf((next) => ['the ', 'gateway ', 'holds ', 'a ', 'worst ', 'case, ', 'then ', 'settles. '][Math.floor(next() * 8)]!)],
];

const directory = await mkdtemp(join(tmpdir(), 'bench-huge-'));
try {
  const upstream = await startChild<{ url: string }>('bench/fast-upstream.ts', []);
  const gateway = await startChild<{ url: string; key: string }>('bench/gateway-process.ts', [upstream.info.url, directory]);
  const post = (body: string) =>
    fetch(`${gateway.info.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.info.key}` },
      body,
    });
  const small = JSON.stringify({ model: 'fast/echo', messages: [{ role: 'user', content: 'hi' }] });
  const summary = (times: number[]) => {
    const sorted = [...times].sort((a, b) => a - b);
    return { p50: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN, max: sorted.at(-1) ?? Number.NaN };
  };
  /** Round trips of small requests, one after another, while `work` runs (or for 300 ms). */
  async function smallDuring(work: Promise<unknown> | null): Promise<number[]> {
    let done = false;
    void (work ?? new Promise((resolve) => setTimeout(resolve, 300))).finally(() => (done = true));
    const times: number[] = [];
    while (!done) {
      const started = performance.now();
      await (await post(small)).arrayBuffer();
      times.push(performance.now() - started);
    }
    return times;
  }
  await smallDuring(null);

  console.log(`| ${SIZE / 1024 / 1024} MiB prompt | model | status | answered in ms | small requests meanwhile: p50 / max ms (alone: p50 / max) |`);
  console.log('|---|---|---|---|---|');
  for (const [name, make] of PROMPTS) {
    const content = make();
    for (const model of ['fast/echo', 'fast/vast']) {
      const body = JSON.stringify({ model, max_tokens: 10, messages: [{ role: 'user', content }] });
      const alone = summary(await smallDuring(null));
      const started = performance.now();
      let answeredMs = 0;
      const call = post(body).then(async (response) => {
        await response.arrayBuffer();
        answeredMs = performance.now() - started;
        return response.status;
      });
      const meanwhile = summary(await smallDuring(call));
      const status = await call;
      console.log(
        `| ${name} | ${model} | ${status} | ${answeredMs.toFixed(0)} | ${meanwhile.p50.toFixed(1)} / ${meanwhile.max.toFixed(1)} (${alone.p50.toFixed(1)} / ${alone.max.toFixed(1)}) |`,
      );
    }
  }
} finally {
  await stopAllChildren();
  await rm(directory, { recursive: true, force: true });
}
