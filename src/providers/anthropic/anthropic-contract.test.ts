import { configSchema } from '../../config/schema.ts';
import type { Usage } from '../../canonical/chat-result.ts';
import { runFixtureReplays, runProviderContract, type ContractSubject } from '../../testing/provider-contract.ts';
import { createAnthropicProvider } from './anthropic-provider.ts';

const usage = (inputTokens: number, outputTokens: number, more: Partial<Usage> = {}): Usage => ({
  inputTokens,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens,
  reasoningTokens: 0,
  ...more,
});

// Anthropic's input_tokens leaves out cache reads and writes; the canonical count adds them back.
const textUsage = usage(472 + 1_024, 12, { cachedInputTokens: 1_024 });

const subject: ContractSubject = {
  name: 'Anthropic',
  path: '/v1/messages',
  fixtures: new URL('./__fixtures__/', import.meta.url),
  create(url, timeoutMs) {
    const alias = { candidates: ['claude/model'], reasoning: 'low' };
    const config = configSchema.parse({
      providers: [{ id: 'claude', kind: 'anthropic', base_url: url, api_key: 'sk-ant-test-0123456789secret', timeout_ms: timeoutMs, connections: 4 }],
      models: [
        {
          id: 'claude/model',
          provider: 'claude',
          upstream: 'upstream-model',
          price: { input: '3', output: '15' },
          context_window: 200_000,
          max_output_tokens: 64_000,
          capabilities: { tools: true, vision: true, reasoning: true },
        },
      ],
      aliases: { 'svc/fast': alias, 'svc/balanced': alias, 'svc/best': alias },
    });
    return { provider: createAnthropicProvider(config.providers[0]!), model: config.models[0]! };
  },
  text: {
    json: 'anthropic-text',
    chunks: 'anthropic-text-with-pings',
    result: { content: 'Paris is the capital of France — «Paris».', toolCalls: [], finishReason: 'stop', usage: textUsage },
    parts: [
      { type: 'text-delta', text: 'Paris is the capital' },
      { type: 'text-delta', text: ' of France — «Paris».' },
      { type: 'finish', finishReason: 'stop', usage: textUsage },
    ],
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
        { type: 'reasoning-delta', text: 'Compare the tenths:' },
        { type: 'reasoning-delta', text: ' 8 > 1.' },
        { type: 'reasoning-signature', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds6C2kgQ=' },
        { type: 'text-delta', text: '9.8 is larger.' },
        { type: 'finish', finishReason: 'stop', usage: usage(90, 58) },
      ],
    },
    {
      fixture: 'anthropic-tool-use-input-json-delta',
      parts: [
        { type: 'text-delta', text: 'Checking both.' },
        { type: 'tool-call-start', index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city": "Pa' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: 'ris"}' },
        { type: 'tool-call-start', index: 1, id: 'toolu_01VmDsTK3fBYL2F7CdnxS7Mg', name: 'get_weather' },
        { type: 'tool-call-delta', index: 1, argumentsDelta: '{"city": "Rome"}' },
        { type: 'finish', finishReason: 'tool_calls', usage: toolUsage },
      ],
    },
    {
      // A tool without input streams no fragment; its arguments are "{}", as generate says, so an
      // OpenAI-format client gets JSON it can parse.
      fixture: 'anthropic-tool-without-arguments',
      parts: [
        { type: 'tool-call-start', index: 0, id: 'toolu_01QE1WLsSVp5hy5Q3GmGTmjP', name: 'list_issues' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '{}' },
        { type: 'finish', finishReason: 'tool_calls', usage: usage(565, 48) },
      ],
    },
    {
      fixture: 'anthropic-overloaded-error-mid-stream',
      parts: [{ type: 'text-delta', text: 'Once upon' }],
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
        reasoningBlocks: [{ text: 'Two cities, two calls.', signature: 'EqQBCgIYAhIMtoolsig' }],
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
