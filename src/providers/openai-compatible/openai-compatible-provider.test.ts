import type { Usage } from '../../canonical/chat-result.ts';
import { configSchema } from '../../config/schema.ts';
import { runFixtureReplays, runProviderContract, type ContractSubject } from '../../testing/provider-contract.ts';
import { createOpenAICompatibleProvider } from './openai-compatible-provider.ts';

const usage = (inputTokens: number, outputTokens: number, more: Partial<Usage> = {}): Usage => ({
  inputTokens,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens,
  reasoningTokens: 0,
  ...more,
});

const subject: ContractSubject = {
  name: 'OpenAI-compatible',
  path: '/v1/chat/completions',
  fixtures: new URL('./__fixtures__/', import.meta.url),
  create(url, timeoutMs) {
    const alias = { candidates: ['compat/model'], reasoning: 'low' };
    const config = configSchema.parse({
      providers: [
        { id: 'compat', kind: 'openai', base_url: `${url}/v1/`, api_key: 'sk-test-0123456789secret', timeout_ms: timeoutMs, connections: 4 },
      ],
      models: [
        {
          id: 'compat/model',
          provider: 'compat',
          upstream: 'upstream-model',
          price: { input: '1', output: '2' },
          context_window: 128_000,
          max_output_tokens: 16_000,
          capabilities: { tools: true, vision: false, reasoning: false },
        },
      ],
      aliases: { 'svc/fast': alias, 'svc/balanced': alias, 'svc/best': alias },
    });
    return { provider: createOpenAICompatibleProvider(config.providers[0]!), model: config.models[0]! };
  },
  text: {
    json: 'openai-text',
    chunks: 'openai-text-usage-in-last-chunk',
    result: {
      content: 'Paris is the capital of France — «Paris».',
      toolCalls: [],
      finishReason: 'stop',
      usage: { inputTokens: 1_234, cachedInputTokens: 1_024, cacheWriteTokens: 0, outputTokens: 12, reasoningTokens: 0 },
    },
    parts: [
      { type: 'text-delta', text: 'Paris' },
      { type: 'text-delta', text: ' is the capital' },
      { type: 'text-delta', text: ' of France — «Paris».' },
      {
        type: 'finish',
        finishReason: 'stop',
        usage: { inputTokens: 1_234, cachedInputTokens: 1_024, cacheWriteTokens: 0, outputTokens: 12, reasoningTokens: 0 },
      },
    ],
  },
  errorBeforeFirstPart: 'openai-error-before-first-chunk',
  errorBody: (status) => ({
    error: { message: `upstream says ${status}`, type: status === 429 ? 'requests' : 'server_error', param: null, code: null },
  }),
};

runProviderContract(subject);

runFixtureReplays(
  subject,
  [
    { fixture: 'openai-text-usage-in-last-chunk', parts: subject.text.parts },
    {
      fixture: 'openai-parallel-tool-calls',
      parts: [
        { type: 'tool-call-start', index: 0, id: 'call_Ab12Cd34Ef56Gh78Ij90Kl12', name: 'get_weather' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '{"ci' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: 'ty": "Pa' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: 'ris"}' },
        { type: 'tool-call-start', index: 1, id: 'call_Mn34Op56Qr78St90Uv12Wx34', name: 'get_weather' },
        { type: 'tool-call-delta', index: 1, argumentsDelta: '{"city": ' },
        { type: 'tool-call-delta', index: 1, argumentsDelta: '"Rome"}' },
        { type: 'finish', finishReason: 'tool_calls', usage: usage(85, 47) },
      ],
    },
    {
      fixture: 'openai-error-before-first-chunk',
      parts: [],
      failure: { failure: 'unavailable', message: /The server had an error while processing your request/ },
    },
    {
      fixture: 'azure-prompt-filter-first-chunk',
      parts: [
        { type: 'text-delta', text: 'Hello' },
        { type: 'finish', finishReason: 'stop', usage: usage(9, 2) },
      ],
    },
    {
      fixture: 'deepseek-reasoning-content-keep-alive',
      parts: [
        { type: 'reasoning-delta', text: '9.11 vs 9.8:' },
        { type: 'reasoning-delta', text: ' compare tenths, 1 < 8.' },
        { type: 'text-delta', text: '9.8' },
        { type: 'text-delta', text: ' is larger.' },
        { type: 'finish', finishReason: 'stop', usage: usage(18, 120, { reasoningTokens: 105 }) },
      ],
    },
    {
      fixture: 'vllm-reasoning-content',
      parts: [
        { type: 'reasoning-delta', text: 'The user greets' },
        { type: 'reasoning-delta', text: ' me.\n' },
        { type: 'text-delta', text: '\n\n' },
        { type: 'text-delta', text: 'Hi there' },
        { type: 'text-delta', text: '!' },
        { type: 'finish', finishReason: 'stop', usage: usage(12, 19) },
      ],
    },
    {
      fixture: 'vllm-error-after-text',
      parts: [{ type: 'text-delta', text: 'Once upon' }],
      failure: { failure: 'unavailable', message: /likely due to a CUDA error\. \(500\)/ },
    },
    {
      fixture: 'groq-usage-in-x-groq',
      parts: [
        { type: 'text-delta', text: 'Low latency' },
        { type: 'text-delta', text: ' matters.' },
        { type: 'finish', finishReason: 'stop', usage: usage(18, 4) },
      ],
    },
    {
      fixture: 'openrouter-processing-comments',
      parts: [
        { type: 'text-delta', text: 'Hello' },
        { type: 'text-delta', text: ' from the router.' },
        { type: 'finish', finishReason: 'stop', usage: usage(2_400, 7, { cachedInputTokens: 1_800, cacheWriteTokens: 500 }) },
      ],
    },
    {
      fixture: 'openrouter-error-mid-stream',
      parts: [{ type: 'text-delta', text: 'Partial' }],
      failure: { failure: 'unavailable', message: /Provider disconnected unexpectedly \(server_error\)/ },
    },
    {
      fixture: 'ollama-finish-on-last-content-chunk',
      parts: [
        { type: 'reasoning-delta', text: 'Short answer wanted.' },
        { type: 'text-delta', text: 'Hi' },
        { type: 'text-delta', text: '!' },
        { type: 'finish', finishReason: 'stop', usage: usage(11, 9) },
      ],
    },
    {
      fixture: 'ollama-tool-call-finishes-with-stop',
      parts: [
        { type: 'tool-call-start', index: 0, id: 'call_ke3hxbqs', name: 'get_weather' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":"Paris"}' },
        { type: 'finish', finishReason: 'tool_calls', usage: usage(160, 18) },
      ],
    },
    {
      fixture: 'gemini-tool-calls-without-index',
      parts: [
        { type: 'tool-call-start', index: 0, id: 'function-call-13950297845829385912', name: 'get_weather' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":"Paris"}' },
        { type: 'tool-call-start', index: 1, id: 'function-call-13950297845829385913', name: 'get_weather' },
        { type: 'tool-call-delta', index: 1, argumentsDelta: '{"city":"Rome"}' },
        { type: 'finish', finishReason: 'tool_calls', usage: usage(70, 24, { reasoningTokens: 57 }) },
      ],
    },
    {
      fixture: 'gemini-tool-call-arguments-without-index',
      parts: [
        { type: 'tool-call-start', index: 0, id: 'function-call-5501', name: 'search' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '{"query":' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '"gateways"}' },
        { type: 'finish', finishReason: 'tool_calls', usage: usage(40, 9) },
      ],
    },
    {
      fixture: 'mistral-thinking-content-array',
      parts: [
        { type: 'reasoning-delta', text: '17 * 23' },
        { type: 'reasoning-delta', text: ' = 391.' },
        { type: 'text-delta', text: '3' },
        { type: 'text-delta', text: '91' },
        { type: 'finish', finishReason: 'stop', usage: usage(28, 139) },
      ],
    },
    {
      // llama.cpp builds of 2025 send the error as a non-standard `error:` field, which SSE ignores.
      fixture: 'llamacpp-error-field-mid-stream',
      parts: [{ type: 'text-delta', text: 'The' }],
      failure: { failure: 'unavailable', message: /ended before it finished/ },
    },
  ],
  [
    { fixture: 'openai-text', result: subject.text.result },
    {
      fixture: 'openai-parallel-tool-calls',
      result: {
        content: '',
        toolCalls: [
          { id: 'call_Ab12Cd34Ef56Gh78Ij90Kl12', name: 'get_weather', arguments: '{"city": "Paris"}' },
          { id: 'call_Mn34Op56Qr78St90Uv12Wx34', name: 'get_weather', arguments: '{"city": "Rome"}' },
        ],
        finishReason: 'tool_calls',
        usage: usage(85, 47),
      },
    },
    {
      fixture: 'deepseek-reasoning-content',
      result: {
        content: '9.8 is larger.',
        reasoning: '9.11 vs 9.8: compare tenths, 1 < 8.',
        toolCalls: [],
        finishReason: 'stop',
        usage: usage(18, 120, { reasoningTokens: 105 }),
      },
    },
    {
      fixture: 'deepseek-cache-hit-tokens-only',
      result: { content: 'Hello!', toolCalls: [], finishReason: 'stop', usage: usage(1_100, 3, { cachedInputTokens: 1_024 }) },
    },
    {
      fixture: 'mistral-thinking-content-array',
      result: { content: '391', reasoning: '17 * 23 = 391.', toolCalls: [], finishReason: 'stop', usage: usage(28, 139) },
    },
    { fixture: 'openrouter-error-in-200-body', failure: { failure: 'unavailable', message: /Upstream error from Anthropic: Overloaded \(502\)/ } },
  ],
);
