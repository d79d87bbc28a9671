import type { ProviderConfig } from '../../config/schema.ts';
import type { ChatResult } from '../../canonical/chat-result.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import type { ProviderAdapter, ProviderCall } from '../provider.ts';
import { SseDecoder, type SseEvent } from '../../formats/sse/parse-sse.ts';
import { bodyChunks, createUpstreamAgent, discardBody, postJson, readJson, transportFailure, withTraceHeaders } from '../upstream-http.ts';
import { OpenAIStreamState } from '../../formats/openai-chat/convert-from-openai-chunks.ts';
import { convertFromOpenAIResponse } from '../../formats/openai-chat/convert-from-openai-response.ts';
import { convertToOpenAIRequest } from '../../formats/openai-chat/convert-to-openai-request.ts';
import { invalidResponse } from '../../formats/openai-chat/openai-chat-errors.ts';
import { OpenAIChunkReader } from '../../formats/openai-chat/parse-openai-chunks.ts';
import { RelayBatch } from '../../formats/relay-batch.ts';

/** Any server speaking OpenAI chat completions: OpenAI, vLLM, Ollama, llama.cpp, Groq, Together, OpenRouter... */
export function createOpenAICompatibleProvider(config: ProviderConfig): ProviderAdapter {
  const agent = createUpstreamAgent(config);
  const url = new URL(`${config.baseUrl}/chat/completions`);
  const headers: Record<string, string> = { ...config.headers };
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;

  /** The body, with the gateway's prompt_cache_key where the provider takes one and the client sent none. */
  function requestBody(call: ProviderCall, stream: boolean): Record<string, unknown> {
    const body = convertToOpenAIRequest(call, stream);
    if (config.promptCacheKey && call.promptCacheKey && body.prompt_cache_key === undefined) body.prompt_cache_key = call.promptCacheKey();
    return body;
  }

  /** The client's own headers (Codex's) go too; the configured ones and the key win over them. */
  const headersFor = (call: ProviderCall) => {
    const forwarded = call.request.providerOptions?.openai?.headers;
    return withTraceHeaders(forwarded ? { ...forwarded, ...headers } : headers, call.traceHeaders);
  };

  async function generate(call: ProviderCall): Promise<ChatResult> {
    const response = await postJson(agent, url, headersFor(call), requestBody(call, false), call.signal, call.jsonTexts);
    return convertFromOpenAIResponse(await readJson(response, call.signal));
  }

  /** An async generator, so the request and its status check run on the first next(). */
  async function* stream(call: ProviderCall): AsyncGenerator<StreamPart> {
    const response = await postJson(agent, url, headersFor(call), requestBody(call, true), call.signal, call.jsonTexts);
    try {
      // A server that ignored `stream: true` answers with one JSON body; that is not a stream.
      const contentType = String(response.headers['content-type'] ?? '');
      if (contentType.includes('application/json')) throw invalidResponse(`expected text/event-stream, got ${contentType}`);
      // Bytes -> events -> chunks -> parts as synchronous stages of one loop: a promise per
      // upstream read, not one per stage and event (4 of them per part before).
      const events = new SseDecoder();
      const chunks = new OpenAIChunkReader();
      const state = new OpenAIStreamState();
      // A client of this format gets the text deltas relayed, the rest as parts encoded again.
      const relayHead = call.relay?.format === 'openai' ? call.relay.head : undefined;
      const relayed = new RelayBatch();
      // Lazily: parts before a failing event still reach the client before the failure.
      function* partsOf(completed: SseEvent[]): Generator<StreamPart> {
        for (const event of completed) {
          // Most events: a piece of text in the bytes of the first, read by that text alone.
          const delta = chunks.textDelta(event);
          if (delta !== undefined) {
            const relay = relayHead === undefined || delta.text === '' ? undefined : chunks.relayed(delta.json, relayHead);
            if (relay !== undefined) relayed.add(relay, delta.text);
            else if (delta.text !== '') yield delta;
            continue;
          }
          let parts: StreamPart[];
          try {
            const chunk = chunks.read(event);
            parts = chunk ? state.accept(chunk) : [];
          } catch (error) {
            // What was relayed before a failing event still reaches the client before the failure.
            yield* relayed.take();
            throw error;
          }
          // The text delta the shape was learned from relays as the ones after it will.
          const learned = relayHead !== undefined && parts.length === 1 && parts[0]!.type === 'text-delta' ? chunks.textDelta(event) : undefined;
          const relay = learned && chunks.relayed(learned.json, relayHead!);
          if (learned && relay !== undefined) {
            relayed.add(relay, learned.text);
            continue;
          }
          // What was relayed before this event leaves before its parts.
          if (parts.length > 0) yield* relayed.take();
          yield* parts;
        }
        yield* relayed.take();
      }
      for await (const bytes of bodyChunks(response, call.signal)) for (const part of partsOf(events.push(bytes))) yield part;
      for (const part of partsOf(events.finish())) yield part;
      yield state.finish();
    } catch (error) {
      // The caller's own abort wins over whatever the pipeline made of it.
      throw call.signal.aborted ? transportFailure(error, call.signal) : error;
    } finally {
      // Closes the upstream connection on every early exit (an error, the consumer's return());
      // a no-op once the body was read to its end, which keeps the connection for reuse.
      discardBody(response);
    }
  }

  return { generate, stream, close: () => agent.close() };
}
