import type { ProviderConfig } from '../../config/schema.ts';
import type { ChatResult } from '../../protocol/canonical/chat-result.ts';
import type { StreamPart } from '../../protocol/canonical/stream-part.ts';
import type { ProviderAdapter, ProviderCall } from '../provider.ts';
import { ProviderError } from '../provider-error.ts';
import { parseSse } from '../sse/parse-sse.ts';
import { bodyChunks, createUpstreamAgent, postJson, readJson } from '../upstream-http.ts';
import { convertToOpenAIRequest } from './convert-to-openai-request.ts';
import { mapOpenAIFinishReason } from './map-openai-finish-reason.ts';
import { parseOpenAIUsage } from './parse-openai-usage.ts';
import { OpenAIStreamMapper } from './openai-stream-mapper.ts';

/** Any server speaking OpenAI chat completions: OpenAI, vLLM, Ollama, llama.cpp, Groq, Together, OpenRouter... */
export function createOpenAICompatibleProvider(config: ProviderConfig): ProviderAdapter {
  const agent = createUpstreamAgent(config);
  const url = `${config.baseUrl}/chat/completions`;
  const headers: Record<string, string> = { ...config.headers };
  if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;

  async function generate(call: ProviderCall): Promise<ChatResult> {
    const response = await postJson(agent, url, headers, convertToOpenAIRequest(call, false), call.signal);
    const body = (await readJson(response, call.signal)) as Record<string, any>;
    const choice = Array.isArray(body?.choices) ? body.choices[0] : undefined;
    const message = choice?.message;
    if (typeof message !== 'object' || message === null) {
      throw new ProviderError('invalid_response', 'the provider answer has no choices[0].message');
    }
    const toolCalls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
    const result: ChatResult = {
      content: typeof message.content === 'string' ? message.content : '',
      toolCalls: toolCalls.map((call: any) => ({
        id: String(call?.id ?? ''),
        name: String(call?.function?.name ?? ''),
        arguments: typeof call?.function?.arguments === 'string' ? call.function.arguments : '',
      })),
      finishReason: mapOpenAIFinishReason(choice.finish_reason),
    };
    const reasoning = message.reasoning_content ?? message.reasoning;
    if (typeof reasoning === 'string' && reasoning) result.reasoning = reasoning;
    const usage = parseOpenAIUsage(body.usage);
    if (usage) result.usage = usage;
    return result;
  }

  async function* stream(call: ProviderCall): AsyncGenerator<StreamPart> {
    const response = await postJson(agent, url, headers, convertToOpenAIRequest(call, true), call.signal);
    const mapper = new OpenAIStreamMapper();
    let done = false;
    // Read to the end of the body even after [DONE]: leaving early destroys it, which costs
    // an error object per stream and can cost the keep-alive connection.
    for await (const event of parseSse(bodyChunks(response, call.signal))) {
      if (done) continue;
      if (event.data === '[DONE]') {
        done = true;
        continue;
      }
      let chunk: unknown;
      try {
        chunk = JSON.parse(event.data);
      } catch {
        throw new ProviderError('invalid_response', 'the provider sent a stream event that is not JSON');
      }
      yield* mapper.map(chunk);
    }
    yield mapper.finish();
  }

  return { generate, stream, close: () => agent.close() };
}
