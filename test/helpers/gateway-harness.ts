import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { issueApiKey } from '../../src/auth/issue-api-key.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { createGateway, type RunningGateway } from '../../src/gateway.ts';
import { NANO_PER_USD } from '../../src/lib/money.ts';
import type { ApiKeyRecord, Scope } from '../../src/storage/records.ts';
import { DEFAULT_ACCOUNT_ID } from '../../src/storage/store.ts';
import { startFakeUpstream, type FakeUpstream } from '../fake-upstream/fake-upstream.ts';

export const UPSTREAM_OPENAI_KEY = 'sk-upstream-openai-SECRET';
export const UPSTREAM_ANTHROPIC_KEY = 'sk-ant-upstream-SECRET';

/** A config whose providers are the fake upstream: two OpenAI-format models, one Anthropic, one tiny. */
export function harnessConfigText(fakeUrl: string, databasePath: string, timeoutMs = 1_500): string {
  return `
server: { host: 127.0.0.1, port: 0 }
database: { path: ${JSON.stringify(databasePath)} }
providers:
  - { id: up, kind: openai, base_url: "${fakeUrl}/v1", api_key: ${UPSTREAM_OPENAI_KEY}, timeout_ms: ${timeoutMs} }
  - { id: anth, kind: anthropic, base_url: "${fakeUrl}", api_key: ${UPSTREAM_ANTHROPIC_KEY}, timeout_ms: ${timeoutMs} }
models:
  - id: up/alpha
    provider: up
    upstream: alpha
    price: { input: "0.40", cached_input: "0.10", output: "1.60" }
    context_window: 100000
    max_output_tokens: 4096
    capabilities: { tools: true, vision: true, reasoning: false }
  - id: up/beta
    provider: up
    upstream: beta
    price: { input: "2.00", cached_input: "0.50", output: "8.00" }
    context_window: 200000
    max_output_tokens: 8192
    capabilities: { tools: true, vision: false, reasoning: true }
  - id: anth/claude
    provider: anth
    upstream: claude-x
    price: { input: "3.00", cached_input: "0.30", cache_write: "3.75", output: "15.00" }
    context_window: 200000
    max_output_tokens: 32000
    capabilities: { tools: true, vision: true, reasoning: true }
  - id: up/tiny
    provider: up
    upstream: tiny
    price: { input: "0.10", output: "0.20" }
    context_window: 1000
    max_output_tokens: 200
    capabilities: { tools: false, vision: false, reasoning: false }
aliases:
  svc/fast: { candidates: [up/alpha, up/beta], reasoning: low }
  svc/balanced: { candidates: [anth/claude, up/alpha], reasoning: medium }
  svc/best: { candidates: [up/beta, anth/claude], reasoning: xhigh }
`;
}

export interface Harness {
  gateway: RunningGateway;
  fake: FakeUpstream;
  /** `${gateway}/v1`, what SDKs take as baseURL. */
  baseURL: string;
  /** A key with every scope and every model. */
  key: string;
  createKey(options?: {
    scopes?: Scope[];
    models?: string[] | null;
    expiresAt?: string | null;
    name?: string;
  }): Promise<{ key: string; record: ApiKeyRecord }>;
  /** POST JSON to a gateway path with a key; returns the raw fetch Response. */
  post(path: string, body: unknown, key?: string, headers?: Record<string, string>): Promise<Response>;
  get(path: string, key?: string): Promise<Response>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  timeoutMs?: number;
  drainMs?: number;
  /** Funds added at start (default $1000); 0 adds none. */
  fundsNano?: number;
  /** The gateway's clock (quote expiry). */
  now?: () => number;
  /** Changes the config text before it is parsed (other aliases, more providers). */
  editConfig?: (text: string) => string;
  /** The gateway's logger (default: silent). */
  logger?: FastifyBaseLogger;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const fake = await startFakeUpstream();
  const directory = await mkdtemp(join(tmpdir(), 'gateway-test-'));
  const text = harnessConfigText(fake.url, join(directory, 'gateway.db'), options.timeoutMs);
  const config = parseConfig(options.editConfig ? options.editConfig(text) : text, 'harness');
  const gateway = await createGateway(config, {
    logger: options.logger ?? (pino({ level: 'silent' }) as unknown as FastifyBaseLogger),
    drainMs: options.drainMs,
    now: options.now,
  });
  const store = gateway.deps.store;
  // A reset fake is a healthy provider again: forget the cool-downs its scripted faults caused.
  const resetFake = fake.reset.bind(fake);
  fake.reset = () => {
    resetFake();
    gateway.deps.health.reset(gateway.deps.catalog.models.keys());
  };

  const createKey = (keyOptions: Parameters<Harness['createKey']>[0] = {}) =>
    issueApiKey(store, { name: 'test', scopes: ['inference', 'fix'], ...keyOptions });

  const { key } = await createKey({ name: 'harness' });
  if (options.fundsNano !== 0) await store.addFunds(DEFAULT_ACCOUNT_ID, options.fundsNano ?? 1_000 * NANO_PER_USD, 'harness');
  const baseURL = `${gateway.url}/v1`;
  return {
    gateway,
    fake,
    baseURL,
    key,
    createKey,
    post: (path, body, useKey = key, headers = {}) =>
      fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${useKey}`, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    get: (path, useKey = key) => fetch(`${gateway.url}${path}`, { headers: { authorization: `Bearer ${useKey}` } }),
    async close() {
      await gateway.close();
      await fake.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/** The SSE data payloads of a raw event-stream body, in order. */
export function sseData(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => block.replace(/^data: /, ''));
}

/** Read a streamed body until `enough(text so far)`; fails instead of spinning when the stream ends first. */
export async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, enough: (text: string) => boolean): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  while (!enough(text)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the stream ended before the test had read enough:\n${text}`);
    text += decoder.decode(value, { stream: true });
  }
  return text;
}
