import { renderQuote, renderRun } from '../../fix/render-fix.ts';
import type { FixAgentList } from '../../fix/fix-schemas.ts';
import type { FixQuoteRecord, FixRunRecord, ReceiptRecord } from '../../storage/records.ts';
import type { Balance } from '../account-schema.ts';
import type { ModelList } from '../model-list-schema.ts';
import { renderAccountSummary } from '../render-account-summary.ts';
import { renderReceipt } from '../render-receipt.ts';
import { EXAMPLE_REQUEST_ID } from './openapi-chat-examples.ts';

/** Examples of the document, made by the same renderers as real answers where there is one (the test checks them against the schemas). */

/** The chat example's request: svc/fast, its first candidate timing out, the second answering. */
const fallback: Pick<ReceiptRecord, 'requestedModel' | 'answeringModel' | 'attempts' | 'warnings'> = {
  requestedModel: 'svc/fast',
  answeringModel: 'up/beta',
  attempts: [
    { model: 'up/alpha', outcome: 'failed', errorCode: 'provider_timeout', detail: 'no answer within 30000 ms', latencyMs: 30_002 },
    { model: 'up/beta', outcome: 'succeeded', latencyMs: 812 },
  ],
  warnings: [],
};

const receiptRecord: ReceiptRecord = {
  id: `rcpt_${EXAMPLE_REQUEST_ID.slice('req_'.length)}`,
  requestId: EXAMPLE_REQUEST_ID,
  accountId: 'acct_default',
  keyId: 'key_01JD8WZQ1M3N5P7R9T1V3X5Z7B',
  keyPrefix: 'svc_4f2a9c',
  createdAt: '2026-11-24T05:00:00.123000000Z',
  status: 'succeeded',
  endpoint: 'chat.completions',
  stream: false,
  ...fallback,
  usage: { inputTokens: 412, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 96, reasoningTokens: 0 },
  usageEstimated: false,
  prices: {
    inputNanoPerMillion: 2_000_000_000,
    cachedInputNanoPerMillion: 500_000_000,
    cacheWriteNanoPerMillion: 2_000_000_000,
    outputNanoPerMillion: 8_000_000_000,
  },
  holdNano: 33_592_000,
  costNano: 1_592_000,
  latencyMs: 30_830,
  timeToFirstTokenMs: null,
  errorCode: null,
};

export const receiptExample = renderReceipt(receiptRecord);

export const balanceExample: Balance = {
  object: 'balance',
  currency: 'USD',
  ...renderAccountSummary({
    balanceNano: 41_250_000_000,
    heldNano: 33_592_000,
    holdCount: 1,
    month: '2026-11',
    monthChargedNano: 8_750_000_000,
    monthHeldNano: 33_592_000,
    monthlyBudgetNano: 100_000_000_000,
  }),
};

const quoteRecord: FixQuoteRecord = {
  id: 'quote_01JD8Y4B6D8F0H2K4M6P8R0T2V',
  accountId: 'acct_default',
  keyId: 'key_01JD8WZQ1M3N5P7R9T1V3X5Z7B',
  agent: 'code-fix',
  tier: 'fast',
  input: {},
  inputTokens: 1_830,
  estimatedCostNano: 4_100_000,
  maxCostNano: 12_300_000,
  stepBudget: 3,
  createdAt: '2026-11-24T05:01:00.000Z',
  expiresAt: '2026-11-24T05:06:00.000Z',
};

export const quoteExample = renderQuote(quoteRecord, 3);

const runRecord: FixRunRecord = {
  id: 'run_01JD8Y7G9J1L3N5Q7S9U1W3Y5A',
  quoteId: quoteRecord.id,
  accountId: 'acct_default',
  keyId: quoteRecord.keyId,
  receiptId: 'rcpt_01JD8Y7G9J1L3N5Q7S9U1W3Y5A',
  agent: 'code-fix',
  tier: 'fast',
  maxCostNano: quoteRecord.maxCostNano,
  status: 'succeeded',
  createdAt: '2026-11-24T05:02:00.000Z',
  finishedAt: '2026-11-24T05:02:09.000Z',
  result: {
    patch: '--- a/src/sum.js\n+++ b/src/sum.js\n@@ -1 +1 @@\n-export const sum = (a, b) => a - b;\n+export const sum = (a, b) => a + b;\n',
    files: ['src/sum.js'],
    explanation: 'sum subtracted instead of adding.',
    error: null,
    cost_nano: 3_050_000,
  },
  cancelRequested: false,
};

const step = {
  index: 1,
  kind: 'model' as const,
  status: 'succeeded' as const,
  model: 'up/alpha',
  tokens: { input: 1_830, output: 120 },
  cost_nano: 3_050_000,
  duration_ms: 8_700,
  detail: null,
};

export const runExample = renderRun(runRecord, [
  { runId: runRecord.id, sequence: 2, at: '2026-11-24T05:02:09.000Z', type: 'step.completed', data: { step } },
]);

export const modelListExample: ModelList = {
  object: 'list',
  data: [
    {
      id: 'svc/fast',
      object: 'model',
      created: 1_795_000_000,
      owned_by: 'gateway',
      type: 'alias',
      candidates: ['up/alpha', 'up/beta'],
      default_reasoning_effort: 'low',
      pricing: {
        unit: 'USD per 1M tokens',
        input: '2.000000000',
        cached_input: '0.500000000',
        cache_write: '2.000000000',
        output: '8.000000000',
        note: 'highest price among the candidates',
      },
    },
    {
      id: 'up/alpha',
      object: 'model',
      created: 1_795_000_000,
      owned_by: 'up',
      type: 'model',
      pricing: { unit: 'USD per 1M tokens', input: '0.400000000', cached_input: '0.100000000', cache_write: '0.400000000', output: '1.600000000' },
      context_window: 100_000,
      max_output_tokens: 4_096,
      capabilities: { tools: true, vision: true, reasoning: false, structured_output: true },
    },
  ],
};

export const agentListExample: FixAgentList = {
  object: 'list',
  data: [
    {
      object: 'fix.agent',
      id: 'code-fix',
      name: 'Code fix',
      description: 'Fixes code from a failing command and its output, or an instruction.',
      input: { files: 'array of {path, content}: the files it may change', instruction: 'what to fix' },
      default_steps: 3,
      tiers: [
        {
          tier: 'fast',
          model: 'svc/fast',
          connected: true,
          connected_models: ['up/alpha', 'up/beta'],
          allowed_for_key: true,
          price: { smallest: '0.000600000', typical: '0.004100000', largest: '0.012300000', largest_any_steps: '0.034700000' },
          max_input_tokens: 100_000,
        },
      ],
    },
  ],
};

export const quoteRequestExample = {
  agent: 'code-fix',
  tier: 'fast',
  files: [{ path: 'src/sum.js', content: 'export const sum = (a, b) => a - b;\n' }],
  command: 'node --test',
  output: 'AssertionError: 1 !== 3',
};
