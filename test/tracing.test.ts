import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { tracingWanted } from '../src/telemetry/tracing.ts';
import { BROKEN_EDIT, FIX_INPUT, GOOD_EDIT } from './helpers/fix-fixtures.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './helpers/otlp-receiver.ts';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

describe('OpenTelemetry traces, exported over OTLP/HTTP as the OTEL_* variables say', () => {
  let receiver: OtlpReceiver;
  let harness: Harness;

  before(async () => {
    receiver = await startOtlpReceiver();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_SERVICE_NAME = 'gateway-under-test';
    process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
    harness = await startHarness();
  });
  after(async () => {
    await harness?.close();
    await receiver?.close();
  });

  /** The request span of `receiptId` and its provider-call spans, once exported. */
  async function traceOf(receiptId: string): Promise<{ request: ReceivedSpan; calls: ReceivedSpan[] }> {
    await harness.gateway.deps.tracing!.flush();
    const spans = await receiver.waitFor((all) => all.some((span) => span.attributes['gateway.receipt.id'] === receiptId));
    const request = spans.find((span) => span.attributes['gateway.receipt.id'] === receiptId)!;
    const calls = spans.filter((span) => span.parentSpanId === request.spanId).sort((a, b) => Number(a.startNanos - b.startNanos));
    return { request, calls };
  }

  test('a fallback: the request span under the client traceparent, a span per provider call, traceparent sent upstream', async () => {
    harness.fake.reset();
    harness.fake.script('alpha', { status: 500 });
    harness.fake.script('beta', { text: 'two', usage: { prompt: 50, completion: 3, cached: 10 } });
    const traceId = hex(16);
    const clientSpan = hex(8);
    const response = await harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] }, undefined, {
      traceparent: `00-${traceId}-${clientSpan}-01`,
    });
    assert.equal(response.status, 200);
    const receiptId = response.headers.get('x-svc-receipt-id')!;
    const receipt = (await (await harness.get(`/v1/receipts/${receiptId}`)).json()) as { cost: string };
    const { request, calls } = await traceOf(receiptId);

    assert.equal(request.traceId, traceId, 'the trace the client started');
    assert.equal(request.parentSpanId, clientSpan, "the client's span is the parent");
    assert.equal(request.kind, 2, 'a server span');
    assert.equal(request.name, 'chat svc/fast');
    assert.equal(request.resource['service.name'], 'gateway-under-test', 'OTEL_SERVICE_NAME');
    assert.deepEqual(
      {
        operation: request.attributes['gen_ai.operation.name'],
        requested: request.attributes['gen_ai.request.model'],
        answered: request.attributes['gen_ai.response.model'],
        input: request.attributes['gen_ai.usage.input_tokens'],
        output: request.attributes['gen_ai.usage.output_tokens'],
        cached: request.attributes['gen_ai.usage.cache_read.input_tokens'],
        cost: request.attributes['gateway.cost_nano_usd'],
        status: request.attributes['gateway.status'],
      },
      {
        operation: 'chat',
        requested: 'svc/fast',
        answered: 'up/beta',
        input: 50,
        output: 3,
        cached: 10,
        cost: Number(BigInt(receipt.cost.replace('.', ''))),
        status: 'succeeded',
      },
    );

    assert.equal(calls.length, 2, 'one span per provider call');
    const [failed, answered] = calls as [ReceivedSpan, ReceivedSpan];
    for (const call of calls) {
      assert.equal(call.kind, 3, 'client spans');
      assert.equal(call.traceId, traceId);
      assert.equal(call.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(call.attributes['gen_ai.provider.name'], 'openai');
      assert.equal(call.attributes['gateway.provider.id'], 'up');
      assert.equal(call.attributes['server.address'], '127.0.0.1');
      assert.ok(call.endNanos >= call.startNanos);
    }
    assert.equal(failed.name, 'chat alpha');
    assert.equal(failed.attributes['gateway.model'], 'up/alpha');
    assert.equal(failed.attributes['gateway.outcome'], 'failed');
    assert.equal(failed.attributes['error.type'], 'provider_unavailable');
    assert.equal(failed.statusCode, 2, 'an error status');
    assert.equal(failed.attributes['gateway.cost_nano_usd'], 0);
    assert.equal(answered.name, 'chat beta');
    assert.equal(answered.attributes['gen_ai.request.model'], 'beta', 'the upstream model name');
    assert.equal(answered.attributes['gateway.outcome'], 'succeeded');
    assert.equal(answered.attributes['gen_ai.usage.output_tokens'], 3);
    assert.equal(answered.attributes['gateway.cost_nano_usd'], request.attributes['gateway.cost_nano_usd']);

    // Each provider call carried its own span as the parent of whatever the provider traces.
    const upstream = harness.fake.requests.map((recorded) => String(recorded.headers.traceparent));
    assert.deepEqual(upstream, [`00-${traceId}-${failed.spanId}-01`, `00-${traceId}-${answered.spanId}-01`]);
  });

  test('a stream on the Anthropic route without a traceparent: a new trace, the Anthropic provider named', async () => {
    harness.fake.reset();
    harness.fake.script('claude-x', { text: 'streamed answer', usage: { prompt: 20, completion: 4 } });
    const response = await harness.post(
      '/v1/messages',
      { model: 'anth/claude', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] },
      undefined,
      { 'anthropic-version': '2023-06-01' },
    );
    assert.equal(response.status, 200);
    await response.text();
    const { request, calls } = await traceOf(response.headers.get('x-svc-receipt-id')!);
    assert.equal(request.parentSpanId, '', 'a root span');
    assert.match(request.traceId, /^[0-9a-f]{32}$/);
    assert.equal(request.attributes['gateway.stream'], true);
    assert.equal(request.attributes['gateway.endpoint'], 'messages');
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.attributes['gen_ai.provider.name'], 'anthropic');
    assert.equal(calls[0]!.attributes['gen_ai.usage.output_tokens'], 4);
    assert.equal(String(harness.fake.requests[0]!.headers.traceparent), `00-${request.traceId}-${calls[0]!.spanId}-01`);
  });

  test('no candidate answers: the request span has an error status and the error code; a skipped one is an event', async () => {
    harness.fake.reset();
    harness.fake.script('alpha', { status: 500 }, { status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
    harness.fake.script('beta', { status: 429 });
    // Alpha cools down after five failures: the last request skips it.
    for (let index = 0; index < 5; index++)
      await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'x' }] });
    const response = await harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(response.status, 429, 'beta rate-limited, alpha skipped');
    const receiptId = response.headers.get('x-svc-receipt-id')!;
    const receipt = (await (await harness.get(`/v1/receipts/${receiptId}`)).json()) as { error_code: string };
    const { request, calls } = await traceOf(receiptId);
    assert.equal(request.statusCode, 2);
    assert.equal(request.attributes['gateway.status'], 'failed');
    assert.equal(request.attributes['error.type'], receipt.error_code);
    assert.equal(request.attributes['gateway.cost_nano_usd'], 0);
    assert.deepEqual(
      calls.map((call) => [call.attributes['gateway.model'], call.attributes['gateway.outcome'], call.attributes['error.type']]),
      [['up/beta', 'failed', 'provider_rate_limited']],
      'the one call made',
    );
    const skipped = request.events.find((event) => event.name === 'gateway.candidate_skipped');
    assert.equal(skipped?.attributes['gateway.model'], 'up/alpha', 'the cooled-down candidate, skipped without a call');
    harness.fake.reset();
  });
});

describe('a fix run traced', () => {
  let receiver: OtlpReceiver;
  let harness: Harness;
  before(async () => {
    receiver = await startOtlpReceiver();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    harness = await startHarness();
  });
  after(async () => {
    await harness?.close();
    await receiver?.close();
  });

  test("an invoke_agent span under the client's traceparent, a chat span per step with its cost, traceparent sent upstream", async () => {
    harness.fake.script(
      'alpha',
      { text: BROKEN_EDIT, usage: { prompt: 300, completion: 40 } },
      { text: GOOD_EDIT, usage: { prompt: 400, completion: 50 } },
    );
    const quote = (await (await harness.post('/v1/fix/quote', { agent: 'code-fix', tier: 'fast', ...FIX_INPUT })).json()) as { id: string };
    const traceId = hex(16);
    const response = await harness.post('/v1/fix/runs', { quote: quote.id }, undefined, { traceparent: `00-${traceId}-${hex(8)}-01` });
    const run = (await response.json()) as { status: string; receipt_id: string };
    assert.equal(run.status, 'succeeded');
    const receipt = (await (await harness.get(`/v1/receipts/${run.receipt_id}`)).json()) as { cost: string };
    await harness.gateway.deps.tracing!.flush();
    const spans = await receiver.waitFor((all) => all.some((span) => span.attributes['gateway.receipt.id'] === run.receipt_id));
    const request = spans.find((span) => span.attributes['gateway.receipt.id'] === run.receipt_id)!;
    assert.equal(request.traceId, traceId);
    assert.equal(request.name, 'invoke_agent code-fix');
    assert.equal(request.attributes['gen_ai.operation.name'], 'invoke_agent');
    assert.equal(request.attributes['gen_ai.agent.name'], 'code-fix');
    assert.equal(request.attributes['gen_ai.usage.input_tokens'], 700, 'the run sums its steps');
    const steps = spans.filter((span) => span.parentSpanId === request.spanId).sort((a, b) => Number(a.startNanos - b.startNanos));
    assert.deepEqual(
      steps.map((span) => [span.name, span.attributes['gateway.fix.step'], span.attributes['gateway.outcome']]),
      [
        ['chat alpha', 1, 'succeeded'],
        ['chat alpha', 3, 'succeeded'],
      ],
    );
    const costs = steps.map((span) => Number(span.attributes['gateway.cost_nano_usd']));
    assert.ok(costs.every((cost) => cost > 0));
    assert.equal(costs[0]! + costs[1]!, Number(BigInt(receipt.cost.replace('.', ''))), 'step costs add up to the receipt, to the nano-dollar');
    assert.equal(request.attributes['gateway.cost_nano_usd'], costs[0]! + costs[1]!);
    assert.deepEqual(
      harness.fake.requests.map((recorded) => String(recorded.headers.traceparent)),
      steps.map((span) => `00-${traceId}-${span.spanId}-01`),
    );
  });
});

describe('tracing off', () => {
  test('by default, with OTEL_SDK_DISABLED=true, with OTEL_TRACES_EXPORTER=none; on with an endpoint or otlp', () => {
    assert.equal(tracingWanted({}).on, false, 'off by default');
    assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).on, true);
    assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).on, true);
    assert.equal(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp' }).on, true);
    assert.equal(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }).on, false);
    assert.equal(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).on, false);
    const grpc = tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    assert.equal(grpc.on, false);
    assert.match('warning' in grpc ? String(grpc.warning) : '', /grpc/);
    const zipkin = tracingWanted({ OTEL_TRACES_EXPORTER: 'zipkin' });
    assert.match('warning' in zipkin ? String(zipkin.warning) : '', /only otlp/);
  });

  test('a gateway serving requests with tracing off never loads the OpenTelemetry SDK', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'tracing-off-'));
    try {
      // A loader hook that writes down every @opentelemetry package the process resolves.
      const hooks = join(directory, 'hooks.mjs');
      await writeFile(
        hooks,
        `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@opentelemetry/')) appendFileSync(${JSON.stringify(join(directory, 'loaded.txt'))}, specifier + '\\n');
  return next(specifier, context);
}`,
      );
      const register = join(directory, 'register.mjs');
      await writeFile(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
      const script = join(directory, 'serve.mts');
      const harnessUrl = pathToFileURL(join(process.cwd(), 'test/helpers/gateway-harness.ts')).href;
      await writeFile(
        script,
        `import { startHarness } from ${JSON.stringify(harnessUrl)};
const harness = await startHarness();
const answer = await harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] });
console.log('status', answer.status, 'tracing', harness.gateway.deps.tracing === null ? 'off' : 'on');
await harness.close();`,
      );
      const run = (env: NodeJS.ProcessEnv) => {
        const result = spawnSync(process.execPath, ['--import', 'tsx', '--import', register, script], {
          encoding: 'utf8',
          env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '', ...env },
        });
        assert.equal(result.status, 0, result.stderr);
        return result.stdout;
      };
      assert.match(run({}), /status 200 tracing off/);
      const loaded = await import('node:fs').then((fs) =>
        fs.existsSync(join(directory, 'loaded.txt')) ? fs.readFileSync(join(directory, 'loaded.txt'), 'utf8') : '',
      );
      assert.doesNotMatch(loaded, /@opentelemetry\/(sdk-trace-base|exporter-trace-otlp-http|core|resources)/, 'no SDK module resolved');
      // The hook does see them when tracing is on (an endpoint nobody listens on: the export fails quietly).
      assert.match(run({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }), /status 200 tracing on/);
      const loadedOn = await import('node:fs').then((fs) => fs.readFileSync(join(directory, 'loaded.txt'), 'utf8'));
      assert.match(loadedOn, /@opentelemetry\/sdk-trace-base/);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
