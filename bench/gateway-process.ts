/**
 * The gateway under test, in its own process so its CPU can be read alone from /proc. The benches
 * run it compiled (bench/compiled-gateway.ts), as `npm start` runs the gateway:
 * `node dist/bench-gateway/gateway-process.js <upstream-url> <db-directory>` prints
 * {"url","key","pid"} as one JSON line on stdout, then serves until SIGTERM or until its
 * stdin closes. Everything is on, as in production: auth, routing, receipts in SQLite.
 */
import { join } from 'node:path';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { parseConfig } from '../src/config/load-config.ts';
import { createGateway } from '../src/gateway.ts';
import { storeBackend } from '../src/storage/open-store.ts';
import { holdYoungGeneration, tuneHeapForServing } from '../src/lib/serving-heap.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';

const [upstreamUrl, databaseDirectory] = process.argv.slice(2);
if (!upstreamUrl || !databaseDirectory) {
  console.error('usage: gateway-process.ts <upstream-url> <db-directory>');
  process.exit(2);
}

const configText = `
server: { host: 127.0.0.1, port: 0 }
database: { path: ${JSON.stringify(join(databaseDirectory, 'gateway.db'))} }
providers:
  - { id: fast, kind: openai, base_url: "${upstreamUrl}/v1", api_key: sk-bench-upstream, timeout_ms: 10000 }
models:
  - id: fast/echo
    provider: fast
    upstream: bench-echo-1
    price: { input: "0.40", cached_input: "0.10", output: "1.60" }
    context_window: 128000
    max_output_tokens: 4096
    capabilities: { tools: true, vision: false, reasoning: false }
  # Room for any prompt the body limit lets in (bench/huge-prompts.ts).
  - id: fast/vast
    provider: fast
    upstream: bench-echo-1
    price: { input: "0.10", output: "0.20" }
    context_window: 8000000
    max_output_tokens: 4096
    capabilities: { tools: false, vision: false, reasoning: false }
aliases:
  svc/fast: { candidates: [fast/echo], reasoning: low }
  svc/balanced: { candidates: [fast/echo], reasoning: medium }
  svc/best: { candidates: [fast/echo], reasoning: xhigh }
`;

// V8's heap as `gateway start` sets it: held small while the gateway starts, tuned once it listens.
holdYoungGeneration();

// Logs go to stderr: stdout carries the one JSON line the parent reads.
const logger = pino({ level: 'warn' }, pino.destination(2)) as unknown as FastifyBaseLogger;
const config = parseConfig(configText, 'bench gateway config');
const gateway = await createGateway(config, { logger });

// Rate limiting stays on, at a rate the benchmark never reaches.
const { key } = await issueApiKey(gateway.deps.store, { name: 'bench', rateLimitPerMinute: 1_000_000 });
// Plenty of funds ($1M), so a balance check never turns the benchmark into a 402 test.
await gateway.deps.store.addFunds(DEFAULT_ACCOUNT_ID, 1_000_000 * 1e9, 'bench');

tuneHeapForServing(storeBackend(config).kind);
process.stdout.write(`${JSON.stringify({ url: gateway.url, key, pid: process.pid })}\n`);

let closing = false;
async function shutdown(): Promise<void> {
  if (closing) return;
  closing = true;
  setTimeout(() => process.exit(1), 3_000).unref();
  await gateway.close();
  // A normal exit, so --cpu-prof (when given) writes its profile.
  process.exit(0);
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
process.stdin.once('close', shutdown).resume();
