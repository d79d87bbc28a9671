import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { ModelConfig, ProviderConfig } from '../config/schema.ts';
import type { ReceiptRecord } from '../storage/records.ts';

/** The traces of model requests, exported over OTLP/HTTP. Null when tracing is off: nothing of it is loaded. */
export interface Tracing {
  /**
   * A model request arriving now; `headers` may carry the client's `traceparent`, which becomes its
   * parent. `agent`: a fix run of that agent (the conventions' invoke_agent), else a chat request.
   */
  begin(headers: IncomingHttpHeaders, agent?: string): RequestTrace;
  /** Sends every span ended so far. */
  flush(): Promise<void>;
  /** Sends what is left and stops. */
  shutdown(): Promise<void>;
}

/** One model request's trace: its span, and a span per provider call. */
export interface RequestTrace {
  /** A provider call to `model` starting now: its span's context as headers for the upstream request (`traceparent`). */
  attempt(model: ModelConfig): Record<string, string>;
  /** The request settled with `receipt` (null: it could not be recorded). Ends every span. */
  end(receipt: ReceiptRecord | null): void;
}

/** Why tracing is off, or on and where it exports: read from the standard OTEL_* variables. */
export function tracingWanted(env: NodeJS.ProcessEnv): { on: true } | { on: false; warning?: string } {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { on: false };
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  if (exporters.includes('none')) return { on: false };
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? '').trim();
  const wanted =
    exporters.length > 0 ? exporters.includes('otlp') : Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (exporters.length > 0 && !exporters.includes('otlp'))
    return { on: false, warning: `tracing is off: OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER} (only otlp is supported)` };
  if (wanted && protocol === 'grpc') return { on: false, warning: 'tracing is off: OTEL_EXPORTER_OTLP_PROTOCOL=grpc (only OTLP/HTTP is supported)' };
  return wanted ? { on: true } : { on: false };
}

/**
 * Tracing as the OTEL_* variables ask: off unless OTEL_TRACES_EXPORTER=otlp or an OTLP endpoint is
 * set (and OTEL_SDK_DISABLED is not true). Off, the SDK is never imported.
 */
export async function startTracing(env: NodeJS.ProcessEnv, providers: readonly ProviderConfig[], logger: FastifyBaseLogger): Promise<Tracing | null> {
  const wanted = tracingWanted(env);
  if (!wanted.on) {
    if (wanted.warning) logger.warn(wanted.warning);
    return null;
  }
  const { startOtelTracing } = await import('./otel-tracing.ts');
  return startOtelTracing(env, providers, logger);
}
