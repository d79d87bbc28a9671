import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
// @ts-expect-error: the parser ships without types; its output is described by Family below.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

interface Sample {
  labels?: Record<string, string>;
  value?: string;
  /** Histograms: the parser keeps the buckets of each series (not its labels). */
  buckets?: Record<string, string>;
}
interface Family {
  name: string;
  type: string;
  metrics: Sample[];
}

const parse = (text: string) => new Map((parsePrometheusTextFormat(text) as Family[]).map((family) => [family.name, family]));

function sum(family: Family | undefined, where: Record<string, string>): number {
  return (family?.metrics ?? [])
    .filter((sample) => Object.entries(where).every(([name, value]) => sample.labels?.[name] === value))
    .reduce((total, sample) => total + Number(sample.value ?? sample.buckets?.['+Inf']), 0);
}

/** A histogram series' count, read off its `_count` line (the parser drops a histogram's labels). */
function histogramCount(text: string, name: string, labels: Record<string, string>): number {
  const lines = text.split('\n').filter((line) => line.startsWith(`${name}_count{`));
  const matching = lines.filter((line) => Object.entries(labels).every(([label, value]) => line.includes(`${label}="${value}"`)));
  return matching.reduce((total, line) => total + Number(line.split(' ').at(-1)), 0);
}

const nano = (usd: string) => Number(BigInt(usd.replace('.', '')));

describe('GET /metrics: a Prometheus scrape agrees with the receipts', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness();
  });
  after(() => harness.close());

  test('after a mix of requests: counts, tokens, costs, fallbacks, rate limits, histograms, bounded labels', async () => {
    const { fake } = harness;
    const before = parse(await (await fetch(`${harness.gateway.url}/metrics`)).text());
    assert.equal(sum(before.get('gateway_requests_total'), { requested_model: 'svc/fast', model: 'up/beta', status: 'succeeded' }), 0);
    assert.ok(
      before
        .get('gateway_requests_total')!
        .metrics.some((sample) => sample.labels?.requested_model === 'svc/fast' && sample.labels.model === 'up/beta'),
      'the series of every configured model and alias candidate exist at zero before any request',
    );
    for (const name of ['gateway_cost_nano_usd_total', 'gateway_tokens_total', 'gateway_fallbacks_total', 'gateway_rate_limited_total']) {
      const family = before.get(name);
      assert.ok(family && family.metrics.length > 0, `${name} has series from the start`);
      assert.equal(sum(family, {}), 0);
    }
    assert.ok(sum(before.get('gateway_cost_nano_usd_total'), { model: 'anth/claude', provider: 'anth' }) === 0);
    assert.equal(
      histogramCount(await (await fetch(`${harness.gateway.url}/metrics`)).text(), 'gateway_provider_call_duration_seconds', {
        model: 'up/tiny',
        outcome: 'failed',
      }),
      0,
    );
    fake.script('alpha', { text: 'one', usage: { prompt: 100, completion: 7, cached: 40 } }, { status: 500 }, { status: 500 }, { status: 500 });
    fake.script('beta', { text: 'two', usage: { prompt: 50, completion: 3 } }, { status: 500 });
    const limited = await issueApiKey(harness.gateway.deps.store, { name: 'limited', scopes: ['inference'], rateLimitPerMinute: 1 });
    const ask = (body: Record<string, unknown>, key?: string) =>
      harness.post('/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }], ...body }, key);

    assert.equal((await ask({ model: 'up/alpha' })).status, 200);
    assert.equal((await ask({ model: 'svc/fast' })).status, 200, 'alpha fails, beta answers: a fallback');
    assert.equal((await ask({ model: 'svc/fast' })).status, 503, 'both fail');
    const streamed = await ask({ model: 'up/beta', stream: true });
    await streamed.text();
    assert.equal((await ask({ model: 'no-such-model-a8f3' })).status, 400);
    assert.equal((await ask({ model: 'up/beta' }, limited.key)).status, 200);
    assert.equal((await ask({ model: 'up/beta' }, limited.key)).status, 429);

    const scrape = await fetch(`${harness.gateway.url}/metrics`);
    assert.equal(scrape.status, 200, 'no API key needed');
    assert.match(scrape.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await scrape.text();
    const families = parse(text);
    const receipts = ((await (await harness.get('/v1/receipts?limit=100')).json()) as { data: any[] }).data;
    const limitedReceipts = ((await (await harness.get('/v1/receipts?limit=100', limited.key)).json()) as { data: any[] }).data;
    const all = [...receipts, ...limitedReceipts.filter((receipt) => !receipts.some((other) => other.id === receipt.id))];

    const requests = families.get('gateway_requests_total');
    assert.equal(sum(requests, {}), all.length, 'one count per receipt');
    for (const receipt of all) {
      const labels = { model: receipt.model ?? 'none', status: receipt.status, code: receipt.error_code ?? '' };
      const expected = all.filter(
        (other) => (other.model ?? 'none') === labels.model && other.status === labels.status && (other.error_code ?? '') === labels.code,
      ).length;
      assert.equal(sum(requests, labels), expected, JSON.stringify(labels));
    }
    assert.equal(sum(requests, { requested_model: 'other' }), 1, 'an unknown model name is "other", never the free text');
    assert.ok(!text.includes('no-such-model-a8f3'));

    for (const model of ['up/alpha', 'up/beta']) {
      const charged = all.filter((receipt) => receipt.model === model).reduce((total, receipt) => total + nano(receipt.cost), 0);
      assert.ok(charged > 0);
      assert.equal(sum(families.get('gateway_cost_nano_usd_total'), { model }), charged, `${model}: cost to the nano-dollar`);
      const output = all.filter((receipt) => receipt.model === model).reduce((total, receipt) => total + (receipt.usage?.completion_tokens ?? 0), 0);
      assert.equal(sum(families.get('gateway_tokens_total'), { model, kind: 'output' }), output);
    }
    assert.equal(sum(families.get('gateway_tokens_total'), { model: 'up/alpha', kind: 'cached_input' }), 40);
    assert.equal(sum(families.get('gateway_tokens_total'), { model: 'up/alpha', kind: 'input' }), 60);
    assert.equal(sum(families.get('gateway_fallbacks_total'), { requested_model: 'svc/fast', model: 'up/beta' }), 1);
    assert.equal(sum(families.get('gateway_rate_limited_total'), {}), 1);
    assert.ok(!text.includes('key_prefix') && !text.includes(limited.record.prefix), 'no per-key series unless metrics.per_key');
    assert.equal(sum(requests, { model: 'up/beta', provider: 'up', status: 'succeeded' }), 3, 'the answering model with its provider');
    assert.equal(sum(families.get('gateway_cost_nano_usd_total'), { provider: 'up' }), sum(families.get('gateway_cost_nano_usd_total'), {}));
    const stateModels = new Set(families.get('gateway_model_state')!.metrics.map((sample) => sample.labels?.model));
    assert.deepEqual([...stateModels].sort(), ['anth/claude', 'up/alpha', 'up/beta', 'up/tiny'], 'models only, never an alias');
    assert.equal(sum(families.get('gateway_model_state'), { model: 'anth/claude', provider: 'anth', state: 'up' }), 1);
    const candidates = families.get('gateway_alias_candidate')!.metrics.filter((sample) => sample.labels?.alias === 'svc/fast');
    assert.deepEqual(
      candidates.map((sample) => [sample.labels?.position, sample.labels?.model, sample.labels?.provider]).sort(),
      [
        ['0', 'up/alpha', 'up'],
        ['1', 'up/beta', 'up'],
      ],
      'aliases have a metric of their own: their candidates in order',
    );
    assert.equal(histogramCount(text, 'gateway_overhead_seconds', {}), all.length, 'the overhead histogram counts every receipt');
    assert.equal(histogramCount(text, 'gateway_request_duration_seconds', {}), all.length);
    assert.equal(histogramCount(text, 'gateway_provider_call_duration_seconds', { model: 'up/alpha', provider: 'up', outcome: 'failed' }), 2);
    assert.equal(histogramCount(text, 'gateway_time_to_first_token_seconds', { model: 'up/beta' }), 3);
    assert.ok(sum(families.get('gateway_http_requests_total'), { route: '/v1/chat/completions', status: '429' }) === 1);
    assert.equal(sum(families.get('gateway_holds_in_flight'), {}), 0);
    assert.equal(sum(families.get('gateway_held_nano_usd'), {}), 0);
    assert.equal(sum(families.get('gateway_model_state'), { model: 'up/alpha', state: 'up' }), 1);
    assert.ok(families.has('gateway_process_resident_memory_bytes'), 'process metrics (memory, CPU, event loop lag)');
  });
});

describe('metrics on a port of their own', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness({ editConfig: (text) => text.replace('providers:', 'metrics: { port: 0 }\nproviders:') });
  });
  after(() => harness.close());

  test('served there, and not on the public port', async () => {
    assert.equal((await fetch(`${harness.gateway.url}/metrics`)).status, 404);
    const scrape = await fetch(`${harness.gateway.metricsUrl}/metrics`);
    assert.equal(scrape.status, 200);
    assert.ok(parse(await scrape.text()).has('gateway_requests_total'));
  });
});

describe('metrics.per_key: a key_prefix label on tokens, cost and rate limits', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness({ editConfig: (text) => text.replace('providers:', 'metrics: { per_key: true }\nproviders:') });
  });
  after(() => harness.close());

  test('each key its own series', async () => {
    harness.fake.script('alpha', { text: 'one', usage: { prompt: 10, completion: 2 } });
    const response = await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(response.status, 200);
    const families = parse(await (await fetch(`${harness.gateway.url}/metrics`)).text());
    const prefix = harness.key.slice(0, 12);
    const cost = families.get('gateway_cost_nano_usd_total')!.metrics;
    assert.equal(cost.length, 1);
    assert.ok(prefix.startsWith(cost[0]!.labels!.key_prefix!), 'the public prefix of the key, never the key');
    assert.equal(sum(families.get('gateway_tokens_total'), { key_prefix: cost[0]!.labels!.key_prefix!, kind: 'output' }), 2);
  });
});

describe('/metrics on the public port', () => {
  const onAllAddresses = (text: string) => text.replace('host: 127.0.0.1', 'host: 0.0.0.0');

  test('listening beyond loopback: not served there by default, served with metrics.public: true', async () => {
    const closed = await startHarness({ editConfig: onAllAddresses });
    try {
      assert.equal((await fetch(`${closed.gateway.url}/metrics`)).status, 404);
    } finally {
      await closed.close();
    }
    const open = await startHarness({ editConfig: (text) => onAllAddresses(text).replace('providers:', 'metrics: { public: true }\nproviders:') });
    try {
      const scrape = await fetch(`${open.gateway.url}/metrics`);
      assert.equal(scrape.status, 200);
      assert.ok(parse(await scrape.text()).has('gateway_requests_total'));
    } finally {
      await open.close();
    }
  });
});
