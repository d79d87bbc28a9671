import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { NANO_PER_USD, parseUsd } from '../src/lib/money.ts';
import { FIX_INPUT, GOOD_EDIT, jsonOf as json } from './helpers/fix-fixtures.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

/** Code-like lines of a few tokens each, to build inputs of a chosen size. */
const LINES = [
  'export function total(items) {\n',
  '  return items.reduce((sum, item) => sum + item.price * item.count, 0);\n',
  '}\n',
  '// The discount applies once the cart holds more than three items.\n',
  'const limit = Number(process.env.LIMIT ?? 42);\n',
  'if (limit < 0) throw new RangeError(`limit ${limit} is negative`);\n',
];

function sourceOf(lines: number, seed: number): string {
  let text = '';
  for (let index = 0; index < lines; index++) text += LINES[(index * 7 + seed) % LINES.length];
  return text;
}

async function quote(harness: Harness, body: Record<string, unknown>, key = harness.key) {
  const response = await harness.post('/v1/fix/quote', { agent: 'code-fix', tier: 'fast', ...FIX_INPUT, ...body }, key);
  return { status: response.status, body: await json(response), headers: response.headers };
}

/** The receipt a response names in x-svc-receipt-id, checked to share its request id's suffix. */
async function receiptOf(harness: Harness, headers: Headers): Promise<any> {
  const receiptId = headers.get('x-svc-receipt-id');
  assert.ok(receiptId, 'the answer names its receipt');
  assert.equal(receiptId.slice('rcpt_'.length), headers.get('x-svc-request-id')!.slice('req_'.length), 'receipt and request share their suffix');
  const response = await harness.get(`/v1/receipts/${receiptId}`);
  assert.equal(response.status, 200);
  return json(response);
}

describe('fix quotes: the advertised range bounds every quote', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  test('every quote of every tier, of any size, step budget and maximum, lies inside the range GET /v1/fix/agents gives', async () => {
    const agents = await json(await harness.get('/v1/fix/agents'));
    const codeFix = agents.data.find((agent: { id: string }) => agent.id === 'code-fix');
    // Tokens per line, measured once on the gateway's own count.
    const probe = await quote(harness, { files: [{ path: 'src/cart.js', content: sourceOf(600, 0) }] });
    const base = (await quote(harness, { files: [{ path: 'src/cart.js', content: '' }] })).body.input_tokens;
    const perLine = (probe.body.input_tokens - base) / 600;

    for (const tier of codeFix.tiers) {
      const range = {
        smallest: parseUsd(tier.price.smallest),
        typical: parseUsd(tier.price.typical),
        largest: parseUsd(tier.price.largest),
        largestAnySteps: parseUsd(tier.price.largest_any_steps),
      };
      assert.ok(range.smallest <= range.typical && range.typical <= range.largest && range.largest <= range.largestAnySteps, JSON.stringify(tier));
      const steps = fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined });
      await fc.assert(
        fc.asyncProperty(
          // Up to just past the largest input the default budget accepts: many quotes near the edge, where the margin counts most.
          fc.oneof(fc.double({ min: 0, max: 1.02, noNaN: true }), fc.double({ min: 0.9, max: 1.01, noNaN: true })),
          steps,
          fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
          fc.nat(5),
          async (share, maxSteps, capShare, seed) => {
            const lines = Math.max(0, Math.floor((share * tier.max_input_tokens - base) / perLine));
            const files = [{ path: 'src/cart.js', content: sourceOf(lines, seed) }];
            const plain = await quote(harness, { tier: tier.tier, files, max_steps: maxSteps });
            if (plain.status === 413) {
              assert.equal(plain.body.error.code, 'context_too_large');
              return;
            }
            assert.equal(plain.status, 200, JSON.stringify(plain.body));
            const quotes = [plain.body];
            if (capShare !== undefined) {
              const cap = Math.round(parseUsd(plain.body.max_cost) * (0.5 + capShare / 2));
              const capped = await quote(harness, { tier: tier.tier, files, max_steps: maxSteps, max_cost: cap / NANO_PER_USD });
              if (capped.status === 200) quotes.push(capped.body);
              else assert.equal(capped.body.error.param, 'max_cost');
            }
            for (const body of quotes) {
              const [estimated, maximum] = [parseUsd(body.estimated_cost), parseUsd(body.max_cost)];
              const where = `${tier.tier}: ${JSON.stringify(body)} against ${JSON.stringify(tier.price)}`;
              assert.ok(range.smallest <= estimated && estimated <= maximum, where);
              assert.ok(maximum <= range.largestAnySteps, where);
              if (maxSteps === undefined || maxSteps === codeFix.default_steps) assert.ok(maximum <= range.largest, where);
            }
          },
        ),
        { numRuns: 12, seed: 41 },
      );
    }
  });

  test('context_too_large names each candidate: the input it holds and what the input counts there', async () => {
    const small = await startHarness({
      editConfig: (text) =>
        text
          .replace('svc/fast: { candidates: [up/alpha, up/beta]', 'svc/fast: { candidates: [up/tiny, up/alpha]')
          .replace('    context_window: 100000\n', '    context_window: 12000\n'),
    });
    try {
      const agents = await json(await small.get('/v1/fix/agents'));
      const fast = agents.data[0].tiers.find((tier: { tier: string }) => tier.tier === 'fast');
      const { status, body, headers } = await quote(small, { files: [{ path: 'src/cart.js', content: sourceOf(1_200, 1) }] });
      assert.deepEqual([status, body.error.code], [413, 'context_too_large']);
      const named = [...body.error.message.matchAll(/(up\/\w+) holds at most (\d+) tokens of input and the input counts (?:at least )?(\d+) there/g)];
      assert.deepEqual(
        named.map((match) => match[1]),
        ['up/tiny', 'up/alpha'],
        body.error.message,
      );
      for (const [, , room, counted] of named) assert.ok(Number(counted) > Number(room), body.error.message);
      // The room named is the one the listing gives: the largest of them is the tier's max_input_tokens.
      assert.equal(Math.max(...named.map((match) => Number(match[2]))), fast.max_input_tokens);
      const receipt = await receiptOf(small, headers);
      assert.deepEqual(
        [receipt.status, receipt.error_code, receipt.cost, receipt.endpoint],
        ['failed', 'context_too_large', '0.000000000', 'fix.quote'],
      );
    } finally {
      await small.close();
    }
  });
});

describe('fix quotes and runs: a receipt for every request, refusals too', () => {
  let harness: Harness;
  let offsetMs = 0;
  before(async () => {
    harness = await startHarness({ now: () => Date.now() + offsetMs });
  });
  after(() => harness.close());

  test('a quote has a receipt at cost 0, naming the tier alias', async () => {
    const { status, headers } = await quote(harness, { tier: 'balanced' });
    assert.equal(status, 200);
    const receipt = await receiptOf(harness, headers);
    assert.deepEqual(
      [receipt.status, receipt.endpoint, receipt.requested_model, receipt.cost, receipt.hold, receipt.error_code],
      ['succeeded', 'fix.quote', 'svc/balanced', '0.000000000', '0.000000000', null],
    );
  });

  test('refused quotes (400, 403, 413) have failed receipts at cost 0 with their error code', async () => {
    const badTier = await quote(harness, { tier: 'ultra' });
    assert.deepEqual([badTier.status, badTier.body.error.param], [400, 'tier']);
    assert.deepEqual(
      [(await receiptOf(harness, badTier.headers)).error_code, (await receiptOf(harness, badTier.headers)).status],
      ['invalid_request', 'failed'],
    );

    const notJson = await harness.post('/v1/fix/quote', '{"agent": ');
    assert.equal(notJson.status, 400);
    assert.equal((await receiptOf(harness, notJson.headers)).error_code, 'invalid_request');

    const inferenceOnly = await harness.createKey({ scopes: ['inference'] });
    const denied = await quote(harness, {}, inferenceOnly.key);
    assert.equal(denied.status, 403);
    assert.equal((await receiptOf(harness, denied.headers)).error_code, 'insufficient_scope');

    const huge = await quote(harness, { tier: 'fast', files: [{ path: 'a.js', content: sourceOf(20_000, 2) }] });
    assert.equal(huge.status, 413);
    const receipt = await receiptOf(harness, huge.headers);
    assert.deepEqual([receipt.error_code, receipt.cost, receipt.requested_model], ['context_too_large', '0.000000000', 'svc/fast']);
  });

  test('a run of an unknown or expired quote, a bad body and a rate-limited run have failed receipts at cost 0', async () => {
    const unknown = await harness.post('/v1/fix/runs', { quote: 'quote_nope' });
    assert.equal(unknown.status, 404);
    assert.deepEqual((await json(unknown)).error.param, 'quote');
    assert.equal((await receiptOf(harness, unknown.headers)).error_code, 'not_found');

    const priced = await quote(harness, {});
    offsetMs = 5 * 60_000 + 1;
    try {
      const expired = await harness.post('/v1/fix/runs', { quote: priced.body.id });
      assert.equal(expired.status, 410);
      const receipt = await receiptOf(harness, expired.headers);
      assert.deepEqual(
        [receipt.status, receipt.error_code, receipt.endpoint, receipt.requested_model, receipt.cost],
        ['failed', 'quote_expired', 'fix.runs', 'svc/fast', '0.000000000'],
      );
    } finally {
      offsetMs = 0;
    }

    const extra = await harness.post('/v1/fix/runs', { quote: priced.body.id, extra: 1 });
    assert.equal(extra.status, 400);
    assert.equal((await json(extra)).error.param, 'extra');
    assert.equal((await receiptOf(harness, extra.headers)).error_code, 'invalid_request');

    const { key } = await issueApiKey(harness.gateway.deps.store, { scopes: ['fix'], rateLimitPerMinute: 1 });
    const first = await harness.post('/v1/fix/runs', { quote: 'quote_nope' }, key);
    assert.equal(first.status, 404);
    const limited = await harness.post('/v1/fix/runs', { quote: 'quote_nope' }, key);
    assert.equal(limited.status, 429);
    assert.equal((await receiptOf(harness, limited.headers)).error_code, 'rate_limit_exceeded');
  });

  test('a quote posted again returns its run with a receipt of its own, at cost 0', async () => {
    harness.fake.reset();
    harness.fake.script('alpha', { text: GOOD_EDIT });
    const priced = await quote(harness, {});
    const first = await harness.post('/v1/fix/runs', { quote: priced.body.id });
    const run = await json(first);
    assert.equal(run.status, 'succeeded');
    assert.equal(first.headers.get('x-svc-receipt-id'), run.receipt_id);
    const again = await harness.post('/v1/fix/runs', { quote: priced.body.id });
    const same = await json(again);
    assert.deepEqual([same.id, same.receipt_id], [run.id, run.receipt_id]);
    const repost = await receiptOf(harness, again.headers);
    assert.notEqual(repost.id, run.receipt_id);
    assert.deepEqual([repost.status, repost.endpoint, repost.cost, repost.hold], ['succeeded', 'fix.runs', '0.000000000', '0.000000000']);
    assert.ok(parseUsd((await json(await harness.get(`/v1/receipts/${run.receipt_id}`))).cost) > 0, 'the run is charged on its own receipt');
  });
});

describe('fix quotes: the budget, the maximum and the fields they name', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  test('covered_steps says how many model calls max_cost covers at their worst case; steps carry the call they belong to', async () => {
    const full = await quote(harness, {});
    assert.deepEqual([full.body.step_budget, full.body.covered_steps], [3, 3]);
    const oneStep = await quote(harness, { max_steps: 1 });
    const tight = await quote(harness, { max_steps: 3, max_cost: (parseUsd(oneStep.body.max_cost) + 1_000) / NANO_PER_USD });
    assert.equal(tight.status, 200, JSON.stringify(tight.body));
    assert.deepEqual([tight.body.step_budget, tight.body.covered_steps], [3, 1]);

    harness.fake.reset();
    harness.fake.script('alpha', { text: 'No edit here.' }, { text: GOOD_EDIT });
    const run = await json(await harness.post('/v1/fix/runs', { quote: full.body.id }));
    assert.equal(run.status, 'succeeded');
    assert.deepEqual(
      run.steps.map((step: { index: number; call: number; kind: string }) => [step.index, step.call, step.kind]),
      [
        [1, 1, 'model'],
        [2, 1, 'check'],
        [3, 2, 'model'],
        [4, 2, 'check'],
      ],
    );
  });

  test('max_cost as a JSON number or a decimal string, read exactly to the nano-dollar; wrong ones name max_cost', async () => {
    const full = await quote(harness, {});
    const oneStep = parseUsd((await quote(harness, { max_steps: 1 })).body.max_cost);
    // A number with nine decimals between one step and the full maximum.
    const askedNano = oneStep + 123_456_789;
    assert.ok(askedNano < parseUsd(full.body.max_cost));
    const asNumber = await quote(harness, { max_cost: askedNano / NANO_PER_USD });
    assert.equal(asNumber.status, 200, JSON.stringify(asNumber.body));
    assert.equal(parseUsd(asNumber.body.max_cost), askedNano);
    const asString = await quote(harness, { max_cost: (askedNano / NANO_PER_USD).toFixed(9) });
    assert.equal(parseUsd(asString.body.max_cost), askedNano);
    // Far above the maximum, written with an exponent: the computed maximum.
    const huge = await quote(harness, { max_cost: 1e21 });
    assert.equal(huge.status, 400, 'too large for the ledger');
    const above = await quote(harness, { max_cost: 1e3 });
    assert.equal(above.body.max_cost, full.body.max_cost);
    for (const wrong of [-1, 1e-10, '0.0000000001', 'ten', 1e-7, true]) {
      const refused = await quote(harness, { max_cost: wrong });
      assert.deepEqual([refused.status, refused.body.error.code, refused.body.error.param], [400, 'invalid_request', 'max_cost'], String(wrong));
      assert.match(refused.body.error.message, /^max_cost: /);
    }
  });

  test('param names the field a message names', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ agent: 'nope' }, 'agent'],
      [{ tier: 'ultra' }, 'tier'],
      [{ files: [{ path: '../etc/passwd', content: 'x' }] }, 'files[0].path'],
      [{ files: [FIX_INPUT.files[0], FIX_INPUT.files[0]] }, 'files[1].path'],
      [{ tests: [{ path: 't.js', content: 'x' }] }, 'tests'],
      [{ max_steps: 9 }, 'max_steps'],
      [{ command: undefined, output: undefined }, 'instruction'],
    ];
    for (const [body, param] of cases) {
      const refused = await quote(harness, body);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.equal(refused.body.error.param, param, refused.body.error.message);
      assert.ok(refused.body.error.message.startsWith(`${param}: `), refused.body.error.message);
    }
    const events = await harness.get('/v1/fix/runs/run_nope/events?after=x');
    assert.equal((await json(events)).error.param, 'after');
  });
});
