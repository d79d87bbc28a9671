import { finish, reasoningDeltas, signedReasoningEnd, textDeltas, toolCallParts, usage } from '../../testing/canonical-builders.ts';
import { oneModelConfig, runFixtureReplays, runProviderContract, type ContractSubject } from '../../testing/provider-contract.ts';
import { createAnthropicProvider } from './anthropic-provider.ts';

// Anthropic's input_tokens leaves out cache reads and writes; the canonical count adds them back.
const textUsage = usage(472 + 1_024, 12, { cachedInputTokens: 1_024 });

const subject: ContractSubject = {
  name: 'Anthropic',
  path: '/v1/messages',
  fixtures: new URL('./__fixtures__/', import.meta.url),
  create(url, timeoutMs) {
    const config = oneModelConfig(
      { id: 'claude', kind: 'anthropic', base_url: url, api_key: 'sk-ant-test-0123456789secret', timeout_ms: timeoutMs },
      {
        price: { input: '3', output: '15' },
        context_window: 200_000,
        max_output_tokens: 64_000,
        capabilities: { tools: true, vision: true, reasoning: true },
      },
    );
    return { provider: createAnthropicProvider(config.provider), model: config.model };
  },
  text: {
    json: 'anthropic-text',
    chunks: 'anthropic-text-with-pings',
    result: { content: 'Paris is the capital of France — «Paris».', toolCalls: [], finishReason: 'stop', usage: textUsage },
    parts: [...textDeltas('Paris is the capital', ' of France — «Paris».'), finish('stop', { usage: textUsage })],
  },
  errorBeforeFirstPart: 'anthropic-overloaded-error-before-content',
  errorBody: (status) => ({
    type: 'error',
    error: { type: status === 429 ? 'rate_limit_error' : status === 401 ? 'authentication_error' : 'api_error', message: `upstream says ${status}` },
  }),
};

runProviderContract(subject);

const toolUsage = usage(472 + 2_048, 89, { cacheWriteTokens: 2_048 });

runFixtureReplays(
  subject,
  [
    { fixture: 'anthropic-text-with-pings', parts: subject.text.parts },
    {
      fixture: 'anthropic-thinking-signature-delta',
      parts: [
        ...reasoningDeltas('Compare the tenths:', ' 8 > 1.'),
        signedReasoningEnd('EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds6C2kgQ='),
        ...textDeltas('9.8 is larger.'),
        finish('stop', { usage: usage(90, 58) }),
      ],
    },
    {
      fixture: 'anthropic-tool-use-input-json-delta',
      parts: [
        ...textDeltas('Checking both.'),
        ...toolCallParts(0, 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', 'get_weather', '{"city": "Pa', 'ris"}'),
        ...toolCallParts(1, 'toolu_01VmDsTK3fBYL2F7CdnxS7Mg', 'get_weather', '{"city": "Rome"}'),
        finish('tool_calls', { usage: toolUsage }),
      ],
    },
    {
      // A tool without input streams no fragment; its arguments are "{}", as generate says, so an
      // OpenAI-format client gets JSON it can parse.
      fixture: 'anthropic-tool-without-arguments',
      parts: [...toolCallParts(0, 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', 'list_issues', '{}'), finish('tool_calls', { usage: usage(565, 48) })],
    },
    {
      fixture: 'anthropic-overloaded-error-mid-stream',
      parts: textDeltas('Once upon'),
      failure: { failure: 'unavailable', message: /overloaded_error: Overloaded/ },
    },
    {
      fixture: 'anthropic-overloaded-error-before-content',
      parts: [],
      failure: { failure: 'unavailable', message: /overloaded_error: Overloaded/ },
    },
  ],
  [
    { fixture: 'anthropic-text', result: subject.text.result },
    {
      fixture: 'anthropic-tool-use',
      result: {
        content: 'Checking both.',
        reasoning: 'Two cities, two calls.',
        reasoningBlocks: [{ text: 'Two cities, two calls.', providerMetadata: { anthropic: { signature: 'EqQBCgIYAhIMtoolsig' } } }],
        toolCalls: [
          { id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { id: 'toolu_01VmDsTK3fBYL2F7CdnxS7Mg', name: 'get_weather', arguments: '{"city":"Rome"}' },
        ],
        finishReason: 'tool_calls',
        usage: toolUsage,
      },
    },
  ],
);
