import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One span as an OTLP/HTTP JSON export carries it, attributes made a plain object. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's enum: 2 server, 3 client. */
  kind: number;
  startNanos: bigint;
  endNanos: bigint;
  attributes: Record<string, string | number | boolean>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  events: { name: string; attributes: Record<string, string | number | boolean> }[];
  resource: Record<string, string | number | boolean>;
}

/** A local OTLP/HTTP receiver (POST /v1/traces, JSON): what an OpenTelemetry collector would be sent. */
export interface OtlpReceiver {
  /** Base URL, what OTEL_EXPORTER_OTLP_ENDPOINT takes. */
  url: string;
  spans: ReceivedSpan[];
  /** Every request body as received, for greps. */
  bodies: string[];
  /** Resolves once `enough(spans)` holds; rejects after `timeoutMs`. */
  waitFor(enough: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };

function plain(attributes: { key: string; value: AnyValue }[] = []): Record<string, string | number | boolean> {
  const values: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes) {
    if (value.stringValue !== undefined) values[key] = value.stringValue;
    else if (value.intValue !== undefined) values[key] = Number(value.intValue);
    else if (value.boolValue !== undefined) values[key] = value.boolValue;
    else if (value.doubleValue !== undefined) values[key] = value.doubleValue;
  }
  return values;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const pieces: Buffer[] = [];
  for await (const piece of request) pieces.push(piece as Buffer);
  const bytes = Buffer.concat(pieces);
  return (request.headers['content-encoding'] === 'gzip' ? gunzipSync(bytes) : bytes).toString('utf8');
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((request, response) => {
    void bodyOf(request).then((text) => {
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !String(request.headers['content-type']).includes('json')) {
        response.writeHead(415).end();
        return;
      }
      bodies.push(text);
      const exported = JSON.parse(text) as { resourceSpans: any[] };
      for (const resourceSpans of exported.resourceSpans) {
        const resource = plain(resourceSpans.resource?.attributes);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              startNanos: BigInt(span.startTimeUnixNano),
              endNanos: BigInt(span.endTimeUnixNano),
              attributes: plain(span.attributes),
              statusCode: span.status?.code ?? 0,
              events: (span.events ?? []).map((event: any) => ({ name: event.name, attributes: plain(event.attributes) })),
              resource,
            });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    waitFor(enough, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!enough(spans)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(spans);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the OTLP receiver did not get the spans wanted; it has ${spans.map((span) => span.name).join(', ') || 'none'}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
