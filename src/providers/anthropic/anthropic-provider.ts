import type { ProviderConfig } from '../../config/schema.ts';
import type { ChatResult } from '../../canonical/chat-result.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import type { ProviderAdapter, ProviderCall } from '../provider.ts';
import { SseDecoder, type SseEvent } from '../../formats/sse/parse-sse.ts';
import { bodyChunks, createUpstreamAgent, discardBody, postJson, readJson, withTraceHeaders } from '../upstream-http.ts';
import type { AnthropicMessagesBody } from '../../formats/anthropic-messages/anthropic-wire-types.ts';
import { AnthropicStreamState } from '../../formats/anthropic-messages/convert-from-anthropic-events.ts';
import { convertFromAnthropicMessage } from '../../formats/anthropic-messages/convert-from-anthropic-message.ts';
import { convertToAnthropicRequest } from '../../formats/anthropic-messages/convert-to-anthropic-request.ts';
import { AnthropicFormatError } from '../../formats/anthropic-messages/anthropic-format-errors.ts';
import { toProviderError } from './map-anthropic-error.ts';
import { readAnthropicEvent } from '../../formats/anthropic-messages/parse-anthropic-events.ts';
import { relayedAnthropicEvent, relayedAnthropicText } from '../../formats/anthropic-messages/relay-anthropic-events.ts';
import { RelayBatch } from '../../formats/relay-batch.ts';
import { answersThroughJsonTool, JsonToolUnwrapper, unwrapJsonTool } from '../../formats/anthropic-messages/structured-output.ts';
import { ANTHROPIC_VERSION } from '../../formats/anthropic-betas.ts';

/**
 * An adapter for the Anthropic Messages API. `base_url` is the API origin without `/v1`,
 * e.g. `https://api.anthropic.com`; calls go to `${base_url}/v1/messages`. `headers` from
 * the config are sent last, so they may replace the defaults (e.g. `anthropic-version`)
 * or add `anthropic-beta`.
 */
export function createAnthropicProvider(config: ProviderConfig): ProviderAdapter {
  if (config.kind !== 'anthropic') throw new Error(`provider "${config.id}": kind is ${config.kind}, not anthropic`);
  if (!config.baseUrl) throw new Error(`provider "${config.id}": base_url is required, e.g. https://api.anthropic.com`);
  const agent = createUpstreamAgent(config);
  const url = new URL(`${config.baseUrl}/v1/messages`);
  const headers: Record<string, string> = {
    'anthropic-version': ANTHROPIC_VERSION,
    ...(config.apiKey ? { 'x-api-key': config.apiKey } : {}),
    ...config.headers,
  };
  const versionSet = Object.keys(config.headers).some((name) => name.toLowerCase() === 'anthropic-version');

  async function generate(call: ProviderCall): Promise<ChatResult> {
    const response = await postJson(agent, url, headersFor(headers, versionSet, call), requestBody(call, false), call.signal, call.jsonTexts);
    const body = await readJson(response, call.signal);
    try {
      const result = convertFromAnthropicMessage(body);
      return answersThroughJsonTool(call.request, call.model.capabilities.structured_output === true) ? unwrapJsonTool(result) : result;
    } catch (error) {
      throw toProviderError(error, call.signal);
    }
  }

  /** An async generator, so the request and its status check run on the first next(). */
  async function* stream(call: ProviderCall): AsyncGenerator<StreamPart> {
    const response = await postJson(agent, url, headersFor(headers, versionSet, call), requestBody(call, true), call.signal, call.jsonTexts);
    try {
      const contentType = String(response.headers['content-type'] ?? '');
      if (!contentType.includes('text/event-stream')) {
        throw new AnthropicFormatError(`expected text/event-stream, got ${contentType || 'no content-type'}`);
      }
      // Bytes -> events -> parts as synchronous stages of one loop, as the OpenAI-compatible adapter does.
      const events = new SseDecoder();
      const state = new AnthropicStreamState(call.onInputUsage);
      const unwrap = answersThroughJsonTool(call.request, call.model.capabilities.structured_output === true) ? new JsonToolUnwrapper() : null;
      // A Messages client gets the content events as they came (unless the answer is unwrapped from a tool).
      const relay = call.relay?.format === 'anthropic' && !unwrap;
      const relayed = new RelayBatch();
      // Lazily: parts before a failing event still reach the client before the failure.
      function* partsOf(completed: SseEvent[]): Generator<StreamPart> {
        for (const event of completed) {
          if (state.finished) continue;
          const relayedEvent = relay ? relayedAnthropicEvent(event) : undefined;
          if (relayedEvent !== undefined) {
            relayed.add(relayedEvent, relayedAnthropicText(event));
            continue;
          }
          let parts: StreamPart[];
          try {
            parts = state.accept(readAnthropicEvent(event));
          } catch (error) {
            // What was relayed before a failing event still reaches the client before the failure.
            yield* relayed.take();
            throw error;
          }
          if (parts.length > 0) yield* relayed.take();
          for (const part of parts) {
            const mapped = unwrap ? unwrap.map(part) : part;
            if (mapped) yield mapped;
          }
        }
        yield* relayed.take();
      }
      for await (const bytes of bodyChunks(response, call.signal)) for (const part of partsOf(events.push(bytes))) yield part;
      for (const part of partsOf(events.finish())) yield part;
      state.finish();
    } catch (error) {
      throw toProviderError(error, call.signal);
    } finally {
      // Closes the upstream connection when the consumer stopped early; a no-op once the body was read.
      discardBody(response);
    }
  }

  return { generate, stream, close: () => agent.close() };
}

/** A version as Anthropic names them (a date); anything else stays behind, with a warning. */
const VERSION_SHAPE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The betas an Anthropic client enabled go upstream with the configured ones: fields such as
 * `context_management` are refused without theirs. Its anthropic-version goes too, unless the
 * provider's config sets one.
 */
function headersFor(headers: Record<string, string>, versionSet: boolean, call: ProviderCall): Record<string, string> {
  const { betas, version } = call.request.providerOptions?.anthropic ?? {};
  let sent = withTraceHeaders(headers, call.traceHeaders);
  if (version !== undefined && version !== ANTHROPIC_VERSION && !versionSet) {
    if (VERSION_SHAPE.test(version)) sent = { ...sent, 'anthropic-version': version };
    else call.warn?.(`anthropic-version ${version}: not a version; sent as ${ANTHROPIC_VERSION}`);
  }
  if (!betas?.length) return sent;
  const name = Object.keys(sent).find((key) => key.toLowerCase() === 'anthropic-beta') ?? 'anthropic-beta';
  const configured = (sent[name] ?? '')
    .split(',')
    .map((beta) => beta.trim())
    .filter(Boolean);
  return { ...sent, [name]: [...new Set([...configured, ...betas])].join(',') };
}

function requestBody(call: ProviderCall, stream: boolean): AnthropicMessagesBody {
  const body = convertToAnthropicRequest(call);
  // Set here, never taken from the client's unknown fields: the parser depends on it.
  if (stream) body.stream = true;
  else delete body.stream;
  return body;
}
