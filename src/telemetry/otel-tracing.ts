import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import {
  defaultTextMapGetter,
  defaultTextMapSetter,
  diag,
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ModelConfig, ProviderConfig } from '../config/schema.ts';
import type { ReceiptRecord } from '../storage/records.ts';
import type { RequestTrace, Tracing } from './tracing.ts';

/** Chat requests are the GenAI conventions' `chat` operation, whatever their wire format. */
const OPERATION = 'chat';
/** A fix run is an agent's run: its steps' model calls are `chat` spans under it. */
const AGENT_OPERATION = 'invoke_agent';

/** What a span says about the provider serving a model: its vendor (gen_ai.provider.name), id and host. */
interface ProviderFacts {
  vendor: string;
  id: string;
  address?: string;
  port?: number;
}

function providerFacts(provider: ProviderConfig): ProviderFacts {
  const facts: ProviderFacts = { vendor: provider.catalog !== 'none' ? provider.catalog : provider.kind, id: provider.id };
  if (provider.baseUrl) {
    const url = new URL(provider.baseUrl);
    facts.address = url.hostname;
    facts.port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  }
  return facts;
}

/** The GenAI usage attributes of a receipt's token counts. */
function usageAttributes(usage: ReceiptRecord['usage']): Attributes {
  if (!usage) return {};
  return {
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    'gen_ai.usage.cache_read.input_tokens': usage.cachedInputTokens,
    'gen_ai.usage.cache_creation.input_tokens': usage.cacheWriteTokens,
    'gateway.usage.reasoning_tokens': usage.reasoningTokens,
  };
}

type Attempt = ReceiptRecord['attempts'][number];

/** A provider call's span, started when the call began; ended once the receipt says how it went. */
interface StartedCall {
  model: ModelConfig;
  span: Span;
  startedAt: number;
}

/** The OpenTelemetry SDK: a tracer provider exporting in batches over OTLP/HTTP (JSON), configured by OTEL_* variables. */
export function startOtelTracing(env: NodeJS.ProcessEnv, providers: readonly ProviderConfig[], logger: FastifyBaseLogger): Tracing {
  // The SDK reports export failures through diag: a warn line, never an exception.
  diag.setLogger(
    {
      error: (message, ...args) => logger.warn({ detail: args.map(String).join(' ') }, `tracing: ${message}`),
      warn: (message, ...args) => logger.warn({ detail: args.map(String).join(' ') }, `tracing: ${message}`),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.WARN,
  );
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'model-gateway' }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  const tracer = provider.getTracer('model-gateway');
  const propagator = new W3CTraceContextPropagator();
  const facts = new Map(providers.map((entry) => [entry.id, providerFacts(entry)]));
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318';
  logger.info({ endpoint, service: resource.attributes['service.name'] }, 'tracing: spans are exported over OTLP/HTTP');

  function providerAttributes(model: ModelConfig): Attributes {
    const known = facts.get(model.provider);
    if (!known) return { 'gateway.provider.id': model.provider };
    const attributes: Attributes = { 'gen_ai.provider.name': known.vendor, 'gateway.provider.id': known.id };
    if (known.address) Object.assign(attributes, { 'server.address': known.address, 'server.port': known.port });
    return attributes;
  }

  function begin(headers: IncomingHttpHeaders, agent?: string): RequestTrace {
    const startedAt = Date.now();
    const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const attributes: Attributes = { 'gen_ai.operation.name': agent === undefined ? OPERATION : AGENT_OPERATION };
    if (agent !== undefined) attributes['gen_ai.agent.name'] = agent;
    const name = agent === undefined ? OPERATION : `${AGENT_OPERATION} ${agent}`;
    const span = tracer.startSpan(name, { kind: SpanKind.SERVER, startTime: startedAt, attributes }, parent);
    const inside = trace.setSpan(parent, span);
    const calls: StartedCall[] = [];
    let ended = false;

    /** The call started for a recorded attempt: the first one of its model not yet ended. */
    function callSpan(attempt: Attempt): StartedCall | undefined {
      const index = calls.findIndex((call) => call.model.id === attempt.model);
      return index >= 0 ? calls.splice(index, 1)[0] : undefined;
    }

    function endCall(call: StartedCall, attempt: Attempt, answered: ReceiptRecord | null): void {
      const attributes: Attributes = { 'gateway.outcome': attempt.outcome, 'gateway.cost_nano_usd': attempt.costNano ?? 0 };
      if (attempt.errorCode) attributes['error.type'] = attempt.errorCode;
      if (attempt.step !== undefined) attributes['gateway.fix.step'] = attempt.step;
      if (answered) {
        // A fix run's receipt sums the usage of all its steps: each call keeps its own cost only.
        if (attempt.step === undefined) Object.assign(attributes, usageAttributes(answered.usage));
        attributes['gen_ai.response.model'] = call.model.upstream;
        attributes['gateway.cost_nano_usd'] = attempt.costNano ?? answered.costNano;
      }
      call.span.setAttributes(attributes);
      if (attempt.outcome === 'failed') call.span.setStatus({ code: SpanStatusCode.ERROR, message: attempt.errorCode ?? 'failed' });
      call.span.end(call.startedAt + attempt.latencyMs);
    }

    return {
      attempt(model) {
        const started = Date.now();
        const call = tracer.startSpan(
          `${OPERATION} ${model.upstream}`,
          {
            kind: SpanKind.CLIENT,
            startTime: started,
            attributes: {
              'gen_ai.operation.name': OPERATION,
              'gen_ai.request.model': model.upstream,
              'gateway.model': model.id,
              ...providerAttributes(model),
            },
          },
          inside,
        );
        calls.push({ model, span: call, startedAt: started });
        const carrier: Record<string, string> = {};
        propagator.inject(trace.setSpan(ROOT_CONTEXT, call), carrier, defaultTextMapSetter);
        return carrier;
      },
      end(receipt) {
        if (ended) return;
        ended = true;
        const endAt = Date.now();
        if (!receipt) {
          for (const call of calls) call.span.end(endAt);
          span.setStatus({ code: SpanStatusCode.ERROR, message: 'the request could not be recorded' });
          span.setAttribute('error.type', 'unrecorded');
          span.end(endAt);
          return;
        }
        // The answering call: the last one of the answering model that did not fail; in a fix run, each step's.
        const answering = receipt.answeringModel
          ? receipt.attempts.findLastIndex((attempt) => attempt.model === receipt.answeringModel && attempt.outcome !== 'failed')
          : -1;
        const answered = (attempt: Attempt, index: number) => index === answering || (attempt.step !== undefined && attempt.outcome === 'succeeded');
        receipt.attempts.forEach((attempt, index) => {
          if (attempt.outcome === 'skipped') {
            span.addEvent('gateway.candidate_skipped', { 'gateway.model': attempt.model, 'gateway.reason': attempt.detail ?? '' }, endAt);
            return;
          }
          const call = callSpan(attempt);
          if (call) endCall(call, attempt, answered(attempt, index) ? receipt : null);
        });
        // Calls the receipt does not list (none expected): ended as they stand.
        for (const call of calls) call.span.end(endAt);
        if (agent === undefined) span.updateName(receipt.requestedModel ? `${OPERATION} ${receipt.requestedModel}` : OPERATION);
        const attributes: Attributes = {
          'gateway.endpoint': receipt.endpoint,
          'gateway.request.id': receipt.requestId,
          'gateway.receipt.id': receipt.id,
          'gateway.key.prefix': receipt.keyPrefix,
          'gateway.status': receipt.status,
          'gateway.stream': receipt.stream,
          'gateway.cost_nano_usd': receipt.costNano,
          ...usageAttributes(receipt.usage),
        };
        if (receipt.requestedModel) attributes['gen_ai.request.model'] = receipt.requestedModel;
        if (receipt.answeringModel) attributes['gen_ai.response.model'] = receipt.answeringModel;
        if (receipt.errorCode) attributes['error.type'] = receipt.errorCode;
        span.setAttributes(attributes);
        if (receipt.status === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: receipt.errorCode ?? 'failed' });
        span.end(endAt);
      },
    };
  }

  return {
    begin,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
