import { finish, reasoningDeltas, textDeltas, toolCallParts, usage } from '../../testing/canonical-builders.ts';
import { oneModelConfig, runFixtureReplays, runProviderContract, type ContractSubject } from '../../testing/provider-contract.ts';
import { createOpenAICompatibleProvider } from './openai-compatible-provider.ts';

const textUsage = usage(1_234, 12, { cachedInputTokens: 1_024 });

const subject: ContractSubject = {
  name: 'OpenAI-compatible',
  path: '/v1/chat/completions',
  fixtures: new URL('./__fixtures__/', import.meta.url),
  create(url, timeoutMs) {
    const config = oneModelConfig(
      { id: 'compat', kind: 'openai', base_url: `${url}/v1/`, api_key: 'sk-test-0123456789secret', timeout_ms: timeoutMs },
      {
        price: { input: '1', output: '2' },
        context_window: 128_000,
        max_output_tokens: 16_000,
        capabilities: { tools: true, vision: false, reasoning: false },
      },
    );
    return { provider: createOpenAICompatibleProvider(config.provider), model: config.model };
  },
  text: {
    json: 'openai-text',
    chunks: 'openai-text-usage-in-last-chunk',
    result: { content: 'Paris is the capital of France — «Paris».', toolCalls: [], finishReason: 'stop', usage: textUsage },
    parts: [...textDeltas('Paris', ' is the capital', ' of France — «Paris».'), finish('stop', { usage: textUsage })],
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
        ...toolCallParts(0, 'call_Ab12Cd34Ef56Gh78Ij90Kl12', 'get_weather', '{"ci', 'ty": "Pa', 'ris"}'),
        ...toolCallParts(1, 'call_Mn34Op56Qr78St90Uv12Wx34', 'get_weather', '{"city": ', '"Rome"}'),
        finish('tool_calls', { usage: usage(85, 47) }),
      ],
    },
    {
      fixture: 'openai-error-before-first-chunk',
      parts: [],
      failure: { failure: 'unavailable', message: /The server had an error while processing your request/ },
    },
    { fixture: 'azure-prompt-filter-first-chunk', parts: [...textDeltas('Hello'), finish('stop', { usage: usage(9, 2) })] },
    {
      fixture: 'deepseek-reasoning-content-keep-alive',
      parts: [
        ...reasoningDeltas('9.11 vs 9.8:', ' compare tenths, 1 < 8.'),
        ...textDeltas('9.8', ' is larger.'),
        finish('stop', { usage: usage(18, 120, { reasoningTokens: 105 }) }),
      ],
    },
    {
      fixture: 'vllm-reasoning-content',
      parts: [...reasoningDeltas('The user greets', ' me.\n'), ...textDeltas('\n\n', 'Hi there', '!'), finish('stop', { usage: usage(12, 19) })],
    },
    {
      fixture: 'vllm-error-after-text',
      parts: textDeltas('Once upon'),
      failure: { failure: 'unavailable', message: /likely due to a CUDA error\. \(500\)/ },
    },
    { fixture: 'groq-usage-in-x-groq', parts: [...textDeltas('Low latency', ' matters.'), finish('stop', { usage: usage(18, 4) })] },
    {
      fixture: 'openrouter-processing-comments',
      parts: [
        ...textDeltas('Hello', ' from the router.'),
        finish('stop', { usage: usage(2_400, 7, { cachedInputTokens: 1_800, cacheWriteTokens: 500 }) }),
      ],
    },
    {
      fixture: 'openrouter-error-mid-stream',
      parts: textDeltas('Partial'),
      failure: { failure: 'unavailable', message: /Provider disconnected unexpectedly \(server_error\)/ },
    },
    {
      fixture: 'ollama-finish-on-last-content-chunk',
      parts: [...reasoningDeltas('Short answer wanted.'), ...textDeltas('Hi', '!'), finish('stop', { usage: usage(11, 9) })],
    },
    {
      fixture: 'ollama-tool-call-finishes-with-stop',
      parts: [...toolCallParts(0, 'call_ke3hxbqs', 'get_weather', '{"city":"Paris"}'), finish('tool_calls', { usage: usage(160, 18) })],
    },
    {
      fixture: 'gemini-tool-calls-without-index',
      parts: [
        ...toolCallParts(0, 'function-call-13950297845829385912', 'get_weather', '{"city":"Paris"}'),
        ...toolCallParts(1, 'function-call-13950297845829385913', 'get_weather', '{"city":"Rome"}'),
        finish('tool_calls', { usage: usage(70, 24, { reasoningTokens: 57 }) }),
      ],
    },
    {
      fixture: 'gemini-tool-call-arguments-without-index',
      parts: [...toolCallParts(0, 'function-call-5501', 'search', '{"query":', '"gateways"}'), finish('tool_calls', { usage: usage(40, 9) })],
    },
    {
      fixture: 'mistral-thinking-content-array',
      parts: [...reasoningDeltas('17 * 23', ' = 391.'), ...textDeltas('3', '91'), finish('stop', { usage: usage(28, 139) })],
    },
    {
      // llama.cpp builds of 2025 send the error as a non-standard `error:` field, which SSE ignores.
      fixture: 'llamacpp-error-field-mid-stream',
      parts: textDeltas('The'),
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
