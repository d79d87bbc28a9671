import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../config/load-config.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { costOfParts } from '../lib/money.ts';
import { findAgent } from './fix-agents.ts';
import { firstStepRequest } from './fix-prompt.ts';
import { approvedMaximum, priceFix } from './price-fix.ts';

const config = parseConfig(
  `
providers: [{ id: sim, kind: simulated }]
models:
  - { id: sim/cheap, provider: sim, price: { input: "1", output: "2" }, context_window: 30000, max_output_tokens: 4096 }
  - { id: sim/dear, provider: sim, price: { input: "3", output: "15" }, context_window: 200000, max_output_tokens: 32000 }
  - { id: sim/tiny, provider: sim, price: { input: "1", output: "1" }, context_window: 2000, max_output_tokens: 500 }
aliases:
  svc/fast: { candidates: [sim/cheap, sim/dear], reasoning: low }
  svc/balanced: { candidates: [sim/dear], reasoning: medium }
  svc/best: { candidates: [sim/tiny], reasoning: xhigh }
`,
  'test',
  {},
);
const [cheap, dear, tiny] = config.models as [(typeof config.models)[number], (typeof config.models)[number], (typeof config.models)[number]];
const agent = findAgent('code-fix')!;
const input = (content: string) => ({ files: [{ path: 'a.js', content }], tests: [], instruction: 'fix it' });

test('the maximum is the worst first step plus the worst later steps, on the dearest candidate', async () => {
  const request = firstStepRequest(agent, input('const a = 1;\n'));
  const one = await priceFix([cheap, dear], request, 1);
  const three = await priceFix([cheap, dear], request, 3);
  assert.deepEqual(
    one.candidates.map((model) => model.id),
    ['sim/cheap', 'sim/dear'],
  );
  assert.equal(one.maxCostNano, one.firstStepNano);
  // sim/dear's reply cap is the step cap (8,192 tokens at $15 per 1M): the dearest step.
  assert.ok(one.firstStepNano >= costOfParts([[8_192, dear.price.outputNanoPerMillion]]));
  const later = (three.maxCostNano - three.firstStepNano) / 2;
  assert.ok(Number.isInteger(later) && later > three.firstStepNano, 'a later step carries the previous reply and feedback too');
  // The estimate is one typical step on the first candidate: far below the maximum.
  assert.ok(one.estimatedCostNano > 0 && one.estimatedCostNano < one.maxCostNano / 10);
});

test('input that fits no candidate for every step is context_too_large, saying how much fits', async () => {
  const large = firstStepRequest(agent, input('let x = 1;\n'.repeat(4_000)));
  // sim/cheap holds 30000 - 4096 (reply) - 5112 (a later step's reply and feedback) = 20792 tokens of input.
  assert.deepEqual(
    (await priceFix([cheap, dear], large, 3)).candidates.map((model) => model.id),
    ['sim/dear'],
  );
  await assert.rejects(
    () => priceFix([cheap], large, 3),
    (error: unknown) =>
      error instanceof GatewayError &&
      error.code === 'context_too_large' &&
      /: sim\/cheap holds at most 20792 tokens of input and the input counts (at least )?\d+ there\./.test(error.message),
  );
  await assert.rejects(
    () => priceFix([tiny], firstStepRequest(agent, input('x')), 3),
    (error: unknown) => error instanceof GatewayError && /sim\/tiny holds at most 0 tokens of input/.test(error.message),
  );
});

test('a client maximum lowers the quote, but never below one step', async () => {
  const price = await priceFix([cheap, dear], firstStepRequest(agent, input('const a = 1;\n')), 3);
  assert.equal(approvedMaximum(price, undefined), price.maxCostNano);
  assert.equal(approvedMaximum(price, price.firstStepNano), price.firstStepNano);
  assert.equal(approvedMaximum(price, price.maxCostNano * 2), price.maxCostNano);
  assert.throws(
    () => approvedMaximum(price, price.firstStepNano - 1),
    (error: unknown) => error instanceof GatewayError && error.code === 'invalid_request',
  );
});
