import assert from 'node:assert/strict';
import type { ApiKeyRecord, ReceiptRecord } from '../storage/records.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../storage/store.ts';

/** Records and helpers the storage contract suites share. */
export const OTHER_ACCOUNT = 'acct_other';

export function sampleKey(overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const id = overrides.id ?? 'key_000000001aaaaaaaaaaaa';
  return {
    id,
    accountId: DEFAULT_ACCOUNT_ID,
    name: 'test key',
    prefix: `svc_${id.slice(-8)}`,
    hash: `hash-of-${id}`,
    scopes: ['inference'],
    models: null,
    dailyLimitNano: null,
    rateLimitPerMinute: null,
    expiresAt: null,
    revokedAt: null,
    createdAt: '2025-01-01T00:00:00.000Z',
    lastUsedAt: null,
    ...overrides,
  };
}

/** Whose request a sample receipt or hold is: request id from the receipt id, the default account, the sample key. */
export function sampleRequest(id: string): Pick<ReceiptRecord, 'id' | 'requestId' | 'accountId' | 'keyId' | 'keyPrefix'> {
  return { id, requestId: id.replace('rcpt_', 'req_'), accountId: DEFAULT_ACCOUNT_ID, keyId: 'key_000000001aaaaaaaaaaaa', keyPrefix: 'svc_aaaaaaaa' };
}

export function sampleReceipt(overrides: Partial<ReceiptRecord> = {}): ReceiptRecord {
  const id = overrides.id ?? 'rcpt_000000001aaaaaaaaaaaa';
  return {
    ...sampleRequest(id),
    createdAt: '2025-01-02T00:00:00.000Z',
    status: 'succeeded',
    endpoint: '/v1/chat/completions',
    stream: true,
    requestedModel: 'svc/fast',
    answeringModel: 'sim/swift-mini',
    attempts: [
      { model: 'sim/steady', outcome: 'failed', errorCode: 'rate_limited', detail: '429 from upstream', latencyMs: 12 },
      { model: 'sim/swift-mini', outcome: 'succeeded', latencyMs: 340 },
    ],
    warnings: ['sim/swift-mini: top_k: an Anthropic field with no equivalent for this model; dropped'],
    usage: { inputTokens: 1200, cachedInputTokens: 200, cacheWriteTokens: 0, outputTokens: 300, reasoningTokens: 40 },
    usageEstimated: false,
    prices: {
      inputNanoPerMillion: 150_000_000,
      cachedInputNanoPerMillion: 75_000_000,
      cacheWriteNanoPerMillion: 150_000_000,
      outputNanoPerMillion: 600_000_000,
    },
    holdNano: 5_000_000,
    costNano: 345_000,
    latencyMs: 352,
    timeToFirstTokenMs: 180,
    errorCode: null,
    ...overrides,
  };
}

/**
 * The receipt as read back: its createdAt (milliseconds, as written) with nine fractional
 * digits, `tieBreak` nanoseconds past it when it is the (tieBreak + 1)-th of its millisecond.
 */
export function asStored(receipt: ReceiptRecord, tieBreak = 0): ReceiptRecord {
  return { ...receipt, createdAt: withNanos(receipt.createdAt, tieBreak) };
}

/** `2025-01-02T00:00:00.000Z` and 7: `2025-01-02T00:00:00.000000007Z`. */
export function withNanos(millisecondInstant: string, nanos: number): string {
  assert.match(millisecondInstant, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  return `${millisecondInstant.slice(0, -1)}${String(nanos).padStart(6, '0')}Z`;
}

/**
 * The behaviour every Store backend must show. `makeStore` returns a fresh, empty store
 * (migrated or not); each test gets its own and closes it.
 */
/** Runs a test body on a fresh, migrated store and closes it after. */
export function storeRunner(makeStore: () => Promise<Store>) {
  return async function withStore(body: (store: Store) => Promise<void>): Promise<void> {
    const store = await makeStore();
    try {
      await store.migrate();
      await body(store);
    } finally {
      await store.close();
    }
  };
}
