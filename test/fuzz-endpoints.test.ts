import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { envelopeProblem, streamedErrorProblem } from './helpers/contract-envelope.ts';
import { rawBytesCase, rawBytesOf, type RawBytesCase } from './helpers/fuzz/raw-bytes.ts';
import { apiCase, presentsOneLiveKey, PUBLIC_ROUTES, resolveRequest, type FuzzCase, type IdPools, type Keys } from './helpers/fuzz/requests.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';
import { requestBytes, sendHttp, sendRawBytes, type RawRequest, type RawResponse } from './helpers/raw-http.ts';

/**
 * Property-based fuzz of every endpoint over real HTTP (issue 13). CI runs a fixed seed; set
 * FUZZ_SEED and FUZZ_RUNS for another or a longer run (docs/operations.md, "Fuzzing").
 */
const SEED = Number(process.env.FUZZ_SEED ?? 1313);
const RUNS = Number(process.env.FUZZ_RUNS ?? 600);
const RAW_RUNS = Math.max(50, Math.round(RUNS / 4));
/** Longest the event loop may be blocked while one request is served. */
const LOOP_LIMIT_MS = 100;
/** Times a request that blocked the loop is sent before the block counts as its own. */
const STALL_ATTEMPTS = 3;

const BILLABLE = new Set(['/v1/chat/completions', '/v1/responses', '/v1/messages', '/v1/fix/runs']);

function describeRequest(raw: RawRequest): string {
  const body = raw.body === undefined ? '' : typeof raw.body === 'string' ? raw.body : `<bytes ${Buffer.from(raw.body).toString('hex')}>`;
  return `${raw.method} ${raw.path}\n${raw.headers.map(([name, value]) => `${name}: ${value}`).join('\n')}\n\n${body.slice(0, 1_500)}`;
}

/** The data payloads of an event stream: each JSON or [DONE]; with a request id, an error event has the envelope's fields. */
function streamProblem(text: string, requestId: unknown): string | null {
  for (const block of text.split('\n\n')) {
    for (const line of block.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') continue;
      let payload: unknown;
      try {
        payload = JSON.parse(data);
      } catch {
        return `an event's data is not JSON: ${data.slice(0, 200)}`;
      }
      const problem = requestId === null ? null : streamedErrorProblem(payload, requestId);
      if (problem) return problem;
    }
  }
  return null;
}

describe('fuzz: every API endpoint, body, header and query string', () => {
  let harness: Harness;
  let keys: Keys;
  const pools: IdPools = { receipt: [], run: [], quote: [] };
  let loop: IntervalHistogram;
  const tally = new Map<string, number>();
  let slowestMs = 0;
  /** Stalls that did not happen again when the request was repeated. */
  const stalls: string[] = [];

  before(async () => {
    // Rate limits would turn most of the run into 429s: off, except on one key that tests them.
    harness = await startHarness({ editConfig: (text) => `${text}\nlimits: { default_rate_limit_per_minute: 0 }\n` });
    const store = harness.gateway.deps.store;
    const issue = async (options: Parameters<typeof issueApiKey>[1]) => (await issueApiKey(store, { name: 'fuzz', ...options })).key;
    const revoked = await harness.createKey({ name: 'revoked' });
    await store.revokeKey(DEFAULT_ACCOUNT_ID, revoked.record.id, new Date().toISOString(), 'fuzz');
    keys = {
      full: harness.key,
      inference: await issue({ scopes: ['inference'] }),
      fix: await issue({ scopes: ['fix'] }),
      limited: await issue({ scopes: ['inference', 'fix'], models: ['svc/fast', 'up/tiny'] }),
      revoked: revoked.key,
      expired: await issue({ scopes: ['inference', 'fix'], expiresAt: new Date(Date.now() - 60_000).toISOString() }),
      rateLimited: await issue({ scopes: ['inference', 'fix'], rateLimitPerMinute: 1 }),
      unknown: `svc_${'A'.repeat(43)}`,
    };
    loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
  });

  after(async () => {
    loop?.disable();
    const lines = [...tally].sort(([a], [b]) => a.localeCompare(b)).map(([key, count]) => `${key}: ${count}`);
    console.log(`fuzz seed ${SEED}, ${RUNS} runs; slowest event-loop delay ${slowestMs.toFixed(1)} ms\n${lines.join('\n')}`);
    if (stalls.length) console.log(`stalls that did not happen again:\n${stalls.join('\n')}`);
    await harness?.close();
  });

  /** Serve `raw` and measure the longest event-loop delay meanwhile (the gateway runs in this process). */
  async function timed(raw: RawRequest): Promise<{ response: RawResponse; blockedMs: number }> {
    // Reset, then let one sample pass so the histogram has a start point before the request goes out.
    loop.reset();
    await sleep(12);
    const response =
      raw.method === 'HEAD'
        ? ((await sendRawBytes(harness.gateway.url, requestBytes(harness.gateway.url, raw), { firstIsHead: true }))[0] ?? {
            status: 0,
            headers: {},
            body: '',
          })
        : await sendHttp(harness.gateway.url, raw);
    // An overdue sample fires before this timer: the delay of the request is in the histogram.
    await sleep(1);
    const blockedMs = loop.max / 1e6;
    slowestMs = Math.max(slowestMs, blockedMs);
    return { response, blockedMs };
  }

  async function check(fuzzCase: FuzzCase): Promise<void> {
    const store = harness.gateway.deps.store;
    const raw = resolveRequest(fuzzCase, keys, pools);
    const month = new Date().toISOString().slice(0, 7);
    let before = await store.accountSummary(DEFAULT_ACCOUNT_ID, month);
    let { response, blockedMs } = await timed(raw);
    // A shared machine stalls a process now and then: a request that blocks the loop does it every time.
    for (let attempt = 1; blockedMs > LOOP_LIMIT_MS && attempt < STALL_ATTEMPTS; attempt++) {
      stalls.push(`${blockedMs.toFixed(0)} ms: ${describeRequest(raw).slice(0, 300)}`);
      before = await store.accountSummary(DEFAULT_ACCOUNT_ID, month);
      ({ response, blockedMs } = await timed(raw));
    }
    const after = await store.accountSummary(DEFAULT_ACCOUNT_ID, month);

    const problems: string[] = [];
    const route = fuzzCase.route;
    tally.set(`${route} ${response.status}`, (tally.get(`${route} ${response.status}`) ?? 0) + 1);
    if (blockedMs > LOOP_LIMIT_MS)
      problems.push(`the event loop was blocked ${blockedMs.toFixed(0)} ms, ${STALL_ATTEMPTS} times out of ${STALL_ATTEMPTS}`);
    if (response.status === 0) problems.push('no answer');
    if (response.status === 500) problems.push('status 500');
    if (response.status < 300 && !PUBLIC_ROUTES.has(route) && !presentsOneLiveKey(fuzzCase.auth)) {
      problems.push(`answered ${response.status} without one live key (${fuzzCase.auth.scheme}, ${JSON.stringify(fuzzCase.auth.key)})`);
    }
    const contentType = String(response.headers['content-type'] ?? '');
    if (response.status >= 400 && raw.method !== 'HEAD') {
      const problem = envelopeProblem(response, { consoleRoute: false });
      if (problem) problems.push(`not the contract's envelope: ${problem}`);
    } else if (response.status < 300 && raw.method !== 'HEAD') {
      if (contentType.startsWith('text/event-stream')) {
        // Fix runs stream their own events (a failed run names a fix code such as no_valid_edit): JSON is all they owe.
        const problem = streamProblem(response.body, route.startsWith('/v1/fix/') ? null : response.headers['x-svc-request-id']);
        if (problem) problems.push(problem);
      } else if (contentType.startsWith('application/json')) {
        try {
          JSON.parse(response.body);
        } catch {
          problems.push('a 2xx body that says JSON is not JSON');
        }
      }
    }

    // Money: the balance moves by exactly the receipt's charge, and only a request that succeeded is charged.
    const receiptId = response.headers['x-svc-receipt-id'];
    const receipt = typeof receiptId === 'string' ? await store.getReceipt(DEFAULT_ACCOUNT_ID, receiptId) : null;
    const ownReceipt = receipt !== null && receipt.requestId === response.headers['x-svc-request-id'];
    const charged = ownReceipt ? receipt.costNano : 0;
    if (after.balanceNano !== before.balanceNano - charged) {
      problems.push(`the balance moved by ${before.balanceNano - after.balanceNano} nano-USD; the request's receipt charged ${charged}`);
    }
    if (after.holdCount !== before.holdCount || after.heldNano !== before.heldNano) problems.push(`a hold was left: ${JSON.stringify(after)}`);
    if (response.status >= 400 && ownReceipt) {
      if (receipt.costNano !== 0) problems.push(`failed with ${response.status}, yet charged ${receipt.costNano} nano-USD (${receipt.status})`);
      if (receipt.status === 'succeeded') problems.push(`failed with ${response.status}, yet the receipt says succeeded`);
    }
    if (typeof receiptId === 'string' && BILLABLE.has(route) && !receipt) problems.push(`x-svc-receipt-id ${receiptId} names no receipt`);
    if (
      response.status === 200 &&
      ownReceipt &&
      !contentType.startsWith('text/event-stream') &&
      route !== '/v1/fix/runs' &&
      receipt.status !== 'succeeded'
    ) {
      problems.push(`answered 200, yet the receipt says ${receipt.status}`);
    }

    if (problems.length) {
      throw new Error(
        `${problems.join('\n')}\n--- request\n${describeRequest(raw)}\n--- response ${response.status}\n${response.body.slice(0, 1_500)}`,
      );
    }
    collectIds(response, receipt ? receipt.id : null);
  }

  /** Ids the answers name, for later requests' paths and runs. */
  function collectIds(response: RawResponse, receiptId: string | null): void {
    if (receiptId && pools.receipt.length < 50) pools.receipt.push(receiptId);
    const run = response.headers['x-svc-run-id'];
    if (typeof run === 'string' && !pools.run.includes(run)) pools.run.push(run);
    if (response.status === 200 && response.body.startsWith('{')) {
      const body = JSON.parse(response.body);
      if (body?.object === 'fix.quote' && pools.quote.length < 20) pools.quote.push(body.id);
    }
  }

  async function checkRawBytes(rawCase: RawBytesCase): Promise<void> {
    const store = harness.gateway.deps.store;
    const month = new Date().toISOString().slice(0, 7);
    // A request whose client left settles once the gateway sees it gone: the case before may still be
    // settling. Each case starts, and is judged, with nothing in flight (or after 2 s, as it stands).
    const settled = async () => {
      for (let waited = 0; ; waited += 5) {
        const summary = await store.accountSummary(DEFAULT_ACCOUNT_ID, month);
        if (summary.holdCount === 0 || waited >= 2_000) return summary;
        await sleep(5);
      }
    };
    const before = await settled();
    const bytes = rawBytesOf(rawCase, new URL(harness.gateway.url).host, keys.full);
    // Receipts are stamped with their request's start, to the millisecond (nine digits when read back).
    const sentAt = new Date().toISOString().slice(0, 23);
    const responses = await sendRawBytes(harness.gateway.url, bytes, { firstIsHead: rawCase.method === 'HEAD' });
    const after = await settled();
    const problems: string[] = [];
    let charged = 0;
    for (const response of responses) {
      tally.set(`raw ${response.status}`, (tally.get(`raw ${response.status}`) ?? 0) + 1);
      if (response.status < 100) problems.push('bytes that are not an HTTP response');
      if (response.status === 500) problems.push('status 500');
      if (response.status >= 400 && !(rawCase.method === 'HEAD' && response === responses[0])) {
        const problem = envelopeProblem(response, { consoleRoute: false });
        if (problem) problems.push(`not the contract's envelope: ${problem}`);
      }
      const receiptId = response.headers['x-svc-receipt-id'];
      const receipt = typeof receiptId === 'string' ? await store.getReceipt(DEFAULT_ACCOUNT_ID, receiptId) : null;
      if (receipt && response.status < 400) charged += receipt.costNano;
      else if (receipt && receipt.costNano !== 0) problems.push(`failed with ${response.status}, yet charged ${receipt.costNano}`);
    }
    if (responses.length === 0) tally.set('raw closed', (tally.get('raw closed') ?? 0) + 1);
    // The client half-closes once its bytes are sent, which the server takes for a client gone (as
    // nginx does): a request it had begun is cancelled, its connection ended without an answer, and
    // it pays for the prompt when the provider's call had started (docs/decisions.md). Only so.
    const named = new Set(responses.map((response) => response.headers['x-svc-receipt-id']));
    const recent = await store.listReceipts(DEFAULT_ACCOUNT_ID, { limit: 5 });
    for (const receipt of recent.data.filter((one) => one.createdAt.slice(0, 23) >= sentAt && !named.has(one.id))) {
      if (receipt.costNano !== 0 && receipt.status !== 'cancelled') problems.push(`unanswered, yet charged ${receipt.costNano} (${receipt.status})`);
      charged += receipt.costNano;
    }
    if (after.balanceNano !== before.balanceNano - charged)
      problems.push(`the balance moved by ${before.balanceNano - after.balanceNano}; charged ${charged}`);
    if (after.holdCount !== before.holdCount) problems.push(`a hold was left: ${JSON.stringify(after)}`);
    if (problems.length) {
      const shown = bytes.toString('latin1').replace(/p{100,}/, (run) => `<${run.length} × p>`);
      throw new Error(
        `${problems.join('\n')}\n--- bytes\n${JSON.stringify(shown.slice(0, 2_000))}\n--- responses\n${JSON.stringify(responses).slice(0, 1_500)}`,
      );
    }
  }

  test(`${RAW_RUNS} requests broken at the HTTP level: the envelope, never a framework body (seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(rawBytesCase, (rawCase) => checkRawBytes(rawCase)),
      { seed: SEED, numRuns: RAW_RUNS, includeErrorInReport: true },
    );
  });

  test(`${RUNS} requests: no 500, only envelopes, no charge for a failure, no blocked event loop (seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(apiCase, (fuzzCase) => check(fuzzCase)),
      { seed: SEED, numRuns: RUNS, includeErrorInReport: true },
    );
    // The run reached the providers, not only the validators.
    assert.ok(harness.fake.requests.length > RUNS / 20, `only ${harness.fake.requests.length} provider calls`);
  });
});
