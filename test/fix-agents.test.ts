import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { NANO_PER_USD, parseUsd } from '../src/lib/money.ts';
import { createSqliteStore } from '../src/storage/sqlite/sqlite-store.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { assertPatchApplies, BROKEN_EDIT, BROKEN_FILES, FIX_INPUT, GOOD_EDIT, readEvents } from './helpers/fix-fixtures.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

interface RunView {
  id: string;
  status: string;
  patch: string | null;
  files: string[];
  explanation: string | null;
  error: { code: string; message: string } | null;
  steps: Array<{
    index: number;
    kind: string;
    status: string;
    model: string | null;
    cost: string;
    detail: string | null;
    tokens: { input: number; output: number } | null;
  }>;
  cost: string;
  max_cost: string;
  receipt_id: string;
}

async function json<T = any>(response: Response): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`not JSON (${response.status}): ${text}`);
  }
}

async function quote(harness: Harness, body: Record<string, unknown>, key = harness.key) {
  const response = await harness.post('/v1/fix/quote', { agent: 'code-fix', tier: 'fast', ...FIX_INPUT, ...body }, key);
  return { status: response.status, body: await json(response) };
}

async function runQuote(harness: Harness, quoteId: string, key = harness.key): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await harness.post('/v1/fix/runs', { quote: quoteId }, key);
  return { status: response.status, body: await json(response), headers: response.headers };
}

async function balance(harness: Harness): Promise<{ balance: number; held: number; holds: number }> {
  const body = await json(await harness.get('/v1/balance'));
  return { balance: parseUsd(body.balance), held: parseUsd(body.holds.total), holds: body.holds.count };
}

function sumSteps(view: RunView): number {
  return view.steps.reduce((sum, step) => sum + parseUsd(step.cost), 0);
}

describe('fix agents', () => {
  let harness: Harness;
  let offsetMs = 0;
  before(async () => {
    harness = await startHarness({ now: () => Date.now() + offsetMs });
  });
  after(() => harness.close());

  test('GET /v1/fix/agents lists code-fix and test-fix with three tiers, price ranges and connected models', async () => {
    const response = await harness.get('/v1/fix/agents');
    assert.equal(response.status, 200);
    const body = await json(response);
    assert.deepEqual(
      body.data.map((agent: { id: string }) => agent.id),
      ['code-fix', 'test-fix'],
    );
    const codeFix = body.data[0];
    assert.ok(codeFix.input.files && codeFix.input.command && codeFix.input.output && codeFix.input.instruction);
    assert.deepEqual(
      codeFix.tiers.map((tier: { tier: string; model: string }) => [tier.tier, tier.model]),
      [
        ['fast', 'svc/fast'],
        ['balanced', 'svc/balanced'],
        ['best', 'svc/best'],
      ],
    );
    for (const tier of codeFix.tiers) {
      assert.equal(tier.connected, true);
      assert.ok(parseUsd(tier.price.typical) > 0 && parseUsd(tier.price.largest) > parseUsd(tier.price.typical), JSON.stringify(tier));
    }
    assert.deepEqual(codeFix.tiers[0].connected_models, ['up/alpha', 'up/beta']);
    // Any valid key may list; an inference-only key too.
    const { key } = await harness.createKey({ scopes: ['inference'] });
    assert.equal((await harness.get('/v1/fix/agents', key)).status, 200);
  });

  test('a quote prices the input, expires in 5 minutes, and costs nothing', async () => {
    const before = await balance(harness);
    const { status, body } = await quote(harness, {});
    assert.equal(status, 200, JSON.stringify(body));
    assert.match(body.id, /^quote_[0-9a-z]{21}$/);
    assert.deepEqual([body.object, body.agent, body.tier, body.model, body.step_budget], ['fix.quote', 'code-fix', 'fast', 'svc/fast', 3]);
    assert.ok(body.input_tokens > 50);
    assert.ok(parseUsd(body.estimated_cost) > 0 && parseUsd(body.estimated_cost) < parseUsd(body.max_cost));
    assert.equal(Date.parse(body.expires_at) - Date.parse(body.created_at), 5 * 60_000);
    assert.deepEqual(await balance(harness), before, 'no charge, no hold');
  });

  test('a malformed edit, then a good one: succeeded, with a patch git apply takes, one receipt, exact balance', async () => {
    harness.fake.reset();
    harness.fake.script('alpha', { text: BROKEN_EDIT }, { text: GOOD_EDIT });
    const before = await balance(harness);
    const priced = await quote(harness, {});
    const { status, body, headers } = await runQuote(harness, priced.body.id);
    assert.equal(status, 200, JSON.stringify(body));
    const view = body as RunView;
    assert.equal(view.status, 'succeeded', JSON.stringify(view));
    assert.match(view.id, /^run_/);
    assert.equal(headers.get('x-svc-run-id'), view.id);
    assert.equal(headers.get('x-svc-receipt-id'), view.receipt_id);
    assert.deepEqual(view.files, ['src/math.js']);
    assert.match(view.explanation ?? '', /subtracts/);
    assert.deepEqual(
      view.steps.map((step) => [step.index, step.kind, step.status]),
      [
        [1, 'model', 'succeeded'],
        [2, 'check', 'failed'],
        [3, 'model', 'succeeded'],
        [4, 'check', 'succeeded'],
      ],
    );
    assert.equal(view.steps[0]!.model, 'up/alpha');
    assert.match(view.steps[1]!.detail ?? '', /src\/math\.js/);
    assert.match(view.patch ?? '', /^diff --git a\/src\/math\.js b\/src\/math\.js/);
    assert.match(view.patch ?? '', /^- {2}return a - b;$/m);
    assert.match(view.patch ?? '', /^\+ {2}return a \+ b;$/m);
    await assertPatchApplies(BROKEN_FILES, view.patch!);

    // The second call carried the first reply and what was wrong with it.
    assert.equal(harness.fake.requests.length, 2);
    const second = harness.fake.requests[1]!.body as { messages: Array<{ role: string; content: unknown }> };
    assert.deepEqual(
      second.messages.map((message) => message.role),
      ['system', 'user', 'assistant', 'user'],
    );
    assert.match(JSON.stringify(second.messages[3]!.content), /None of your edits were applied/);

    const receipt = await json(await harness.get(`/v1/receipts/${view.receipt_id}`));
    assert.deepEqual([receipt.endpoint, receipt.status, receipt.requested_model, receipt.model], ['fix.runs', 'succeeded', 'svc/fast', 'up/alpha']);
    assert.deepEqual(
      receipt.attempts.map((attempt: { step: number; model: string }) => [attempt.step, attempt.model]),
      [
        [1, 'up/alpha'],
        [3, 'up/alpha'],
      ],
    );
    const cost = parseUsd(view.cost);
    assert.ok(cost > 0);
    assert.equal(cost, sumSteps(view));
    assert.equal(parseUsd(receipt.cost), cost);
    assert.equal(receipt.hold, priced.body.max_cost);
    const after = await balance(harness);
    assert.deepEqual(after, { balance: before.balance - cost, held: 0, holds: 0 });
  });

  test('a model that never writes a valid edit: failed at the step budget, charged for the calls it made', async () => {
    harness.fake.reset();
    harness.fake.script(
      'alpha',
      { text: 'I think it is fine.' },
      { text: BROKEN_EDIT },
      { text: 'src/math.js\n```js\nexport function add(a, b) {\n  // ...\n}\n```\n' },
    );
    const before = await balance(harness);
    const priced = await quote(harness, {});
    const { body } = await runQuote(harness, priced.body.id);
    const view = body as RunView;
    assert.equal(view.status, 'failed', JSON.stringify(view));
    assert.equal(view.error?.code, 'no_valid_edit');
    assert.equal(view.patch, null);
    assert.equal(view.steps.filter((step) => step.kind === 'model').length, 3);
    assert.equal(harness.fake.requests.length, 3, 'exactly the step budget of model calls');
    const cost = parseUsd(view.cost);
    assert.equal(cost, sumSteps(view));
    const receipt = await json(await harness.get(`/v1/receipts/${view.receipt_id}`));
    assert.deepEqual([receipt.status, parseUsd(receipt.cost)], ['failed', cost]);
    assert.deepEqual(await balance(harness), { balance: before.balance - cost, held: 0, holds: 0 });
  });

  test('a step whose worst case would pass what is left of the maximum never starts: cost_cap_reached, partial cost charged', async () => {
    harness.fake.reset();
    // The worst case of one step is the maximum of a one-step quote.
    const oneStep = await quote(harness, { max_steps: 1 });
    const firstStepWorst = parseUsd(oneStep.body.max_cost);
    const capped = await quote(harness, { max_steps: 3, max_cost: (firstStepWorst / NANO_PER_USD + 0.000001).toFixed(9) });
    assert.equal(parseUsd(capped.body.max_cost), firstStepWorst + 1_000);
    harness.fake.script('alpha', { text: BROKEN_EDIT }, { text: GOOD_EDIT });
    const before = await balance(harness);
    const { body } = await runQuote(harness, capped.body.id);
    const view = body as RunView;
    assert.equal(view.status, 'cost_cap_reached', JSON.stringify(view));
    assert.equal(view.error?.code, 'cost_cap_reached');
    assert.equal(harness.fake.requests.length, 1, 'the second call never started');
    const cost = parseUsd(view.cost);
    assert.ok(cost > 0 && cost <= parseUsd(view.max_cost));
    const receipt = await json(await harness.get(`/v1/receipts/${view.receipt_id}`));
    assert.equal(parseUsd(receipt.cost), cost);
    assert.deepEqual(await balance(harness), { balance: before.balance - cost, held: 0, holds: 0 });

    // A maximum below one step is refused up front.
    const tooLow = await quote(harness, { max_cost: '0.000000001' });
    assert.deepEqual([tooLow.status, tooLow.body.error.code], [400, 'invalid_request']);
  });

  test('a quote runs at most once: posted again, also at once, it returns the same run and charges once', async () => {
    harness.fake.reset();
    harness.fake.script('alpha', { text: GOOD_EDIT, headerDelayMs: 100 });
    const priced = await quote(harness, {});
    const [first, second] = await Promise.all([runQuote(harness, priced.body.id), runQuote(harness, priced.body.id)]);
    assert.equal(first.body.id, second.body.id);
    assert.equal(first.body.status, 'succeeded');
    const third = await runQuote(harness, priced.body.id);
    assert.equal(third.body.id, first.body.id);
    assert.equal(harness.fake.requests.length, 1, 'one model call in all');
    const receipts = await json(await harness.get('/v1/receipts?limit=100'));
    const ofRun = receipts.data.filter((receipt: { id: string }) => receipt.id === first.body.receipt_id);
    assert.equal(ofRun.length, 1);
  });

  test('a quote expires after 5 minutes: quote_expired (410)', async () => {
    const priced = await quote(harness, {});
    offsetMs += 5 * 60_000 + 1;
    try {
      const { status, body } = await runQuote(harness, priced.body.id);
      assert.deepEqual([status, body.error.code, body.error.retryable], [410, 'quote_expired', false]);
    } finally {
      offsetMs = 0;
    }
  });

  test('scope, allow-list and lookup errors', async () => {
    const inferenceOnly = await harness.createKey({ scopes: ['inference'] });
    const denied = await quote(harness, {}, inferenceOnly.key);
    assert.deepEqual([denied.status, denied.body.error.code], [403, 'insufficient_scope']);

    const fastOnly = await harness.createKey({ scopes: ['fix'], models: ['svc/fast'] });
    const balanced = await quote(harness, { tier: 'balanced' }, fastOnly.key);
    assert.deepEqual([balanced.status, balanced.body.error.code], [403, 'model_not_allowed']);
    assert.match(balanced.body.error.message, /svc\/balanced/);
    const fast = await quote(harness, { tier: 'fast' }, fastOnly.key);
    assert.equal(fast.status, 200);

    // Running a quote needs the tier's alias on the running key too.
    const balancedQuote = await quote(harness, { tier: 'balanced' });
    const refused = await runQuote(harness, balancedQuote.body.id, fastOnly.key);
    assert.deepEqual([refused.status, refused.body.error.code], [403, 'model_not_allowed']);
    const noScope = await runQuote(harness, balancedQuote.body.id, inferenceOnly.key);
    assert.deepEqual([noScope.status, noScope.body.error.code], [403, 'insufficient_scope']);

    const unknown = await runQuote(harness, 'quote_nope');
    assert.deepEqual([unknown.status, unknown.body.error.code], [404, 'not_found']);
    const missingRun = await harness.get('/v1/fix/runs/run_nope');
    assert.deepEqual([missingRun.status, (await json(missingRun)).error.code], [404, 'not_found']);

    // Another account's run is not found.
    const other = await issueApiKey(harness.gateway.deps.store, { scopes: ['fix'], accountId: 'acct_other' });
    harness.fake.reset();
    harness.fake.script('alpha', { text: GOOD_EDIT });
    const mine = await runQuote(harness, (await quote(harness, {})).body.id);
    const theirs = await harness.get(`/v1/fix/runs/${mine.body.id}`, other.key);
    assert.equal(theirs.status, 404);

    const bad = await quote(harness, { files: [{ path: '../etc/passwd', content: 'x' }] });
    assert.deepEqual([bad.status, bad.body.error.code], [400, 'invalid_request']);
    assert.match(bad.body.error.message, /files\[0\]\.path/);
  });

  test('streamed: one event per step as it starts and ends, then the result, read with a real SSE parser', async () => {
    harness.fake.reset();
    harness.fake.script('alpha', { text: BROKEN_EDIT }, { text: GOOD_EDIT });
    const priced = await quote(harness, {});
    const response = await harness.post('/v1/fix/runs', { quote: priced.body.id, stream: true });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = await readEvents(response);
    assert.deepEqual(
      events.map((event) => event.event),
      [
        'run.started',
        'step.started',
        'step.completed',
        'step.started',
        'step.completed',
        'step.started',
        'step.completed',
        'step.started',
        'step.completed',
        'run.completed',
      ],
    );
    assert.deepEqual(
      events.map((event) => Number(event.id)),
      events.map((_, index) => index + 1),
    );
    const data = events.map((event) => JSON.parse(event.data));
    assert.deepEqual([data[1].step.index, data[1].step.kind, data[1].step.status], [1, 'model', 'running']);
    assert.deepEqual([data[4].step.kind, data[4].step.status], ['check', 'failed']);
    const last = data.at(-1);
    assert.equal(last.run.status, 'succeeded');
    await assertPatchApplies(BROKEN_FILES, last.run.patch);

    // The events can be replayed later, also from a given sequence on (Last-Event-ID).
    const replay = await readEvents(await harness.get(`/v1/fix/runs/${last.run.id}/events`));
    assert.deepEqual(
      replay.map((event) => event.event),
      events.map((event) => event.event),
    );
    const resumed = await fetch(`${harness.gateway.url}/v1/fix/runs/${last.run.id}/events`, {
      headers: { authorization: `Bearer ${harness.key}`, 'last-event-id': '8' },
    });
    assert.deepEqual(
      (await readEvents(resumed)).map((event) => event.id),
      ['9', '10'],
    );
  });

  test('a client that disconnects mid-run does not stop it: the run finishes and is charged once', async () => {
    harness.fake.reset();
    harness.fake.script('alpha', { text: BROKEN_EDIT, headerDelayMs: 200 }, { text: GOOD_EDIT, headerDelayMs: 200 });
    const priced = await quote(harness, {});
    const response = await harness.post('/v1/fix/runs', { quote: priced.body.id, stream: true });
    const runId = response.headers.get('x-svc-run-id')!;
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    let view: RunView;
    for (let tries = 0; ; tries++) {
      view = await json(await harness.get(`/v1/fix/runs/${runId}`));
      if (view.status !== 'running' || tries > 200) break;
      await sleep(25);
    }
    assert.equal(view.status, 'succeeded');
    assert.equal(harness.fake.requests.length, 2);
    const receipt = await json(await harness.get(`/v1/receipts/${view.receipt_id}`));
    assert.equal(parseUsd(receipt.cost), parseUsd(view.cost));
    assert.equal((await balance(harness)).holds, 0);
  });

  test('the run is cancelled on request: cancelled, charged for the call it made', async () => {
    harness.fake.reset();
    harness.fake.script('alpha', { text: BROKEN_EDIT }, { text: GOOD_EDIT, headerDelayMs: 2_000 });
    const before = await balance(harness);
    const priced = await quote(harness, {});
    const response = await harness.post('/v1/fix/runs', { quote: priced.body.id, stream: true });
    const events: string[] = [];
    let cancelled = false;
    await readEvents(response, (event) => {
      events.push(event.event ?? '');
      // The second model call has started: cancel it.
      if (!cancelled && events.filter((name) => name === 'step.started').length === 3) {
        cancelled = true;
        void harness.post(`/v1/fix/runs/${response.headers.get('x-svc-run-id')}/cancel`, {});
      }
    });
    const view = (await json(await harness.get(`/v1/fix/runs/${response.headers.get('x-svc-run-id')}`))) as RunView;
    assert.equal(view.status, 'cancelled', JSON.stringify(view));
    const receipt = await json(await harness.get(`/v1/receipts/${view.receipt_id}`));
    assert.equal(receipt.status, 'cancelled');
    assert.equal(parseUsd(receipt.cost), parseUsd(view.cost));
    assert.ok(parseUsd(view.cost) > 0, 'the calls made are charged, the cut one at its prompt');
    assert.deepEqual(await balance(harness), { balance: before.balance - parseUsd(view.cost), held: 0, holds: 0 });
  });
});

describe('fix agents: money refusals, tiers without models, input too large', () => {
  test('a run whose maximum does not fit the balance is refused (402) with a free receipt, and runs once funds are added', async () => {
    const harness = await startHarness({ fundsNano: 0 });
    try {
      const priced = await quote(harness, {});
      const refused = await runQuote(harness, priced.body.id);
      assert.deepEqual([refused.status, refused.body.error.code], [402, 'insufficient_balance']);
      const receipt = await json(await harness.get(`/v1/receipts/${refused.headers.get('x-svc-receipt-id')}`));
      assert.deepEqual([receipt.status, receipt.cost, receipt.endpoint], ['failed', '0.000000000', 'fix.runs']);
      await harness.gateway.deps.store.addFunds(DEFAULT_ACCOUNT_ID, 5 * NANO_PER_USD, 'test');
      harness.fake.script('alpha', { text: GOOD_EDIT });
      const ran = await runQuote(harness, priced.body.id);
      assert.equal(ran.body.status, 'succeeded');
    } finally {
      await harness.close();
    }
  });

  test('the daily limit of the key counts the maximum: budget_exceeded', async () => {
    const harness = await startHarness();
    try {
      const { key } = await issueApiKey(harness.gateway.deps.store, { scopes: ['fix'], dailyLimitNano: 1_000 });
      const priced = await quote(harness, {}, key);
      const refused = await runQuote(harness, priced.body.id, key);
      assert.deepEqual([refused.status, refused.body.error.code], [402, 'budget_exceeded']);
    } finally {
      await harness.close();
    }
  });

  test('input too large for every candidate of the tier: context_too_large (413) saying how much fits', async () => {
    const harness = await startHarness({
      editConfig: (text) => text.replace('svc/fast: { candidates: [up/alpha, up/beta]', 'svc/fast: { candidates: [up/tiny]'),
    });
    try {
      const { status, body } = await quote(harness, {});
      assert.deepEqual([status, body.error.code], [413, 'context_too_large']);
      assert.match(body.error.message, /: up\/tiny holds at most \d+ tokens of input and the input counts \d+ there\./);
    } finally {
      await harness.close();
    }
  });

  test('a tier with no connected model: connected false in the list, provider_unavailable (503) on quote', async () => {
    const harness = await startHarness({
      editConfig: (text) =>
        text
          .replace(
            'models:\n',
            'models:\n  - { id: far/x, provider: far, price: { input: "1", output: "2" }, context_window: 100000, max_output_tokens: 4096 }\n',
          )
          .replace('providers:\n', 'providers:\n  - { id: far, kind: openai, base_url: "http://10.255.255.1/v1" }\n')
          .replace('svc/best: { candidates: [up/beta, anth/claude]', 'svc/best: { candidates: [far/x]'),
    });
    try {
      const agents = await json(await harness.get('/v1/fix/agents'));
      const best = agents.data[0].tiers.find((tier: { tier: string }) => tier.tier === 'best');
      assert.deepEqual([best.connected, best.connected_models], [false, []]);
      const { status, body } = await quote(harness, { tier: 'best' });
      assert.deepEqual([status, body.error.code, body.error.retryable], [503, 'provider_unavailable', true]);
    } finally {
      await harness.close();
    }
  });

  test('test-fix never edits the tests: an edit to a test file is refused and fed back', async () => {
    const harness = await startHarness();
    try {
      const tests = [{ path: 'test/math.test.js', content: "import { add } from '../src/math.js';\nassert.equal(add(2, 3), 5);\n" }];
      const editTest =
        'test/math.test.js\n```\n<<<<<<< SEARCH\nassert.equal(add(2, 3), 5);\n=======\nassert.equal(add(2, 3), -1);\n>>>>>>> REPLACE\n```\n';
      harness.fake.script('alpha', { text: editTest }, { text: GOOD_EDIT });
      const priced = await quote(harness, { agent: 'test-fix', tests });
      assert.equal(priced.status, 200, JSON.stringify(priced.body));
      const { body } = await runQuote(harness, priced.body.id);
      assert.equal(body.status, 'succeeded');
      assert.match(body.steps[1].detail, /test\/math\.test\.js/);
      assert.deepEqual(body.files, ['src/math.js']);
      await assertPatchApplies([...BROKEN_FILES, ...tests], body.patch);
    } finally {
      await harness.close();
    }
  });
});

describe('fix agents: health and shutdown', () => {
  test('a tier whose models keep failing is not connected until they recover', async () => {
    const harness = await startHarness({ editConfig: (text) => text.replace('providers:', 'health: { cool_down_seconds: 0.5 }\nproviders:') });
    try {
      const down = Array.from({ length: 5 }, () => ({ status: 500 }));
      harness.fake.script('alpha', ...down);
      harness.fake.script('beta', ...down);
      for (let index = 0; index < 5; index++) {
        const chat = await harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] });
        assert.equal(chat.status, 503);
      }
      const agents = await json(await harness.get('/v1/fix/agents'));
      const fast = agents.data[0].tiers.find((tier: { tier: string }) => tier.tier === 'fast');
      assert.deepEqual([fast.connected, fast.connected_models], [false, []]);
      const refused = await quote(harness, {});
      assert.deepEqual([refused.status, refused.body.error.code], [503, 'provider_unavailable']);
      // A model that answers again (its probe, once the cool-down ends) is connected again.
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.equal((await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] })).status, 200);
      assert.equal((await quote(harness, {})).status, 200);
    } finally {
      await harness.close();
    }
  });

  test('shutdown mid-run: the run gets the drain time, then ends failed, charged for the prompt it sent, hold released', async () => {
    const harness = await startHarness({ drainMs: 300, timeoutMs: 30_000 });
    try {
      harness.fake.script('alpha', { hang: true });
      const priced = await quote(harness, {});
      const response = await harness.post('/v1/fix/runs', { quote: priced.body.id, stream: true });
      const runId = response.headers.get('x-svc-run-id')!;
      const events = readEvents(response).catch(() => []);
      while (harness.fake.requests.length === 0) await sleep(10);
      const closing = Date.now();
      await harness.gateway.close();
      assert.ok(Date.now() - closing < 5_000, 'shutdown is bounded by the drain time');
      await events;

      const store = createSqliteStore(harness.gateway.deps.config.database.path);
      try {
        const run = await store.getFixRun(DEFAULT_ACCOUNT_ID, runId);
        assert.equal(run?.status, 'failed');
        assert.equal((run?.result?.error as { code: string }).code, 'gateway_shutdown');
        assert.deepEqual(await store.listHolds(DEFAULT_ACCOUNT_ID), []);
        const receipt = await store.getReceipt(DEFAULT_ACCOUNT_ID, run!.receiptId);
        assert.equal(receipt?.status, 'failed');
        assert.ok(receipt!.costNano > 0, 'the provider read the prompt');
        assert.equal(receipt!.costNano, run!.result!.cost_nano);
        const totals = await store.ledgerTotals(DEFAULT_ACCOUNT_ID);
        assert.equal(totals.funds - totals.charges, await store.getBalance(DEFAULT_ACCOUNT_ID));
      } finally {
        await store.close();
      }
    } finally {
      await harness.close();
    }
  });
});
