import { Agent, request, type Dispatcher } from 'undici';
import type { ProviderConfig } from '../../config/schema.ts';
import type { ChatResult } from '../../protocol/canonical/chat-result.ts';
import type { StreamPart } from '../../protocol/canonical/stream-part.ts';
import type { ProviderAdapter, ProviderCall } from '../provider.ts';
import { parseSse } from '../sse/parse-sse.ts';
import { convertFromAnthropicEvents } from './convert-from-anthropic-events.ts';
import { convertFromAnthropicMessage } from './convert-from-anthropic-message.ts';
import { convertToAnthropicRequest } from './convert-to-anthropic-request.ts';
import { errorFromException, errorFromStatus, invalidResponse, type ErrorContext } from './map-anthropic-error.ts';
import { parseAnthropicEvents } from './parse-anthropic-events.ts';

/** The API version this adapter's request and response shapes follow. */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * An adapter for the Anthropic Messages API. `base_url` is the API origin without `/v1`,
 * e.g. `https://api.anthropic.com`; calls go to `${base_url}/v1/messages`. `headers` from
 * the config are sent last, so they may replace the defaults (e.g. `anthropic-version`)
 * or add `anthropic-beta`.
 */
export function createAnthropicProvider(config: ProviderConfig): ProviderAdapter {
  if (config.kind !== 'anthropic') throw new Error(`provider "${config.id}": kind is ${config.kind}, not anthropic`);
  if (!config.baseUrl) throw new Error(`provider "${config.id}": base_url is required, e.g. https://api.anthropic.com`);
  return new AnthropicProvider(config);
}

class AnthropicProvider implements ProviderAdapter {
  private readonly url: string;
  private readonly headers: Record<string, string>;
  private readonly errorContext: ErrorContext;
  // One keep-alive pool per provider; its timeouts are the provider's timeout_ms.
  private readonly agent: Agent;

  constructor(config: ProviderConfig) {
    this.url = `${config.baseUrl}/v1/messages`;
    this.headers = {
      'content-type': 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
      ...(config.apiKey ? { 'x-api-key': config.apiKey } : {}),
      ...config.headers,
    };
    this.errorContext = { providerId: config.id, apiKey: config.apiKey };
    this.agent = new Agent({
      connections: config.connections,
      headersTimeout: config.timeoutMs,
      bodyTimeout: config.timeoutMs,
    });
  }

  async generate(call: ProviderCall): Promise<ChatResult> {
    const response = await this.send(call, false);
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      throw errorFromException(error, call.signal, this.errorContext);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw invalidResponse('the body is not JSON', this.errorContext);
    }
    try {
      return convertFromAnthropicMessage(body);
    } catch (error) {
      throw errorFromException(error, call.signal, this.errorContext);
    }
  }

  /** An async generator, so the request and its status check run on the first next(). */
  async *stream(call: ProviderCall): AsyncGenerator<StreamPart> {
    const response = await this.send(call, true);
    try {
      const contentType = String(response.headers['content-type'] ?? '');
      if (!contentType.includes('text/event-stream')) {
        throw invalidResponse(`expected text/event-stream, got ${contentType || 'no content-type'}`, this.errorContext);
      }
      yield* convertFromAnthropicEvents(parseAnthropicEvents(parseSse(response.body)));
    } catch (error) {
      throw errorFromException(error, call.signal, this.errorContext);
    } finally {
      // Closes the upstream connection when the consumer stopped early; a no-op once the body was read.
      // undici reports an early close as an 'error' event that nobody is left to hear.
      response.body.on('error', () => {});
      response.body.destroy();
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  /** Sends the request and returns the response once its status is known to be 2xx. */
  private async send(call: ProviderCall, stream: boolean): Promise<Dispatcher.ResponseData> {
    const body = convertToAnthropicRequest(call);
    // Set here, never taken from the client's unknown fields: the parser below depends on it.
    if (stream) body.stream = true;
    else delete body.stream;
    let response: Dispatcher.ResponseData;
    try {
      response = await request(this.url, {
        method: 'POST',
        headers: this.headers,
        body: JSON.stringify(body),
        signal: call.signal,
        dispatcher: this.agent,
      });
    } catch (error) {
      throw errorFromException(error, call.signal, this.errorContext);
    }
    if (response.statusCode >= 200 && response.statusCode < 300) return response;
    // Reading the error body to its end also frees the connection for the next call.
    const text = await response.body.text().catch(() => '');
    throw errorFromStatus(response.statusCode, text, this.errorContext);
  }
}
