import type { RequestOptions } from '../canonical/chat-request.ts';

/**
 * What an Anthropic client's `anthropic-beta` and `anthropic-version` headers become for a model
 * of another kind, which would refuse them (or ignore them silently). An Anthropic-kind provider
 * gets them as sent (anthropic-provider.ts).
 * https://docs.claude.com/en/api/beta-headers
 */

/** The Messages API version whose shapes the gateway reads and writes. */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * Betas whose effect a model of another kind gets, from the gateway's translation or on its own:
 * tool arguments streamed in pieces as they come (fine-grained tool streaming), prompts cached
 * by the provider without marks (prompt caching and its scope), counts from
 * /v1/messages/count_tokens (token counting), output bounded by the model's own limit rather than
 * a beta's (128k output), system messages kept in their place in the conversation
 * (mid-conversation system) and `output_config.effort` sent as the model's reasoning level (effort).
 */
const HONOURED = ['fine-grained-tool-streaming-', 'prompt-caching-', 'token-counting-', 'output-128k-', 'mid-conversation-system-', 'effort-'];

/** Tells `warn` of each beta with no equivalent for a model of another kind, and of a version the gateway does not speak. */
export function warnAnthropicHeaders(options: RequestOptions['anthropic'], warn: (message: string) => void = () => {}): void {
  for (const beta of options?.betas ?? []) {
    if (!HONOURED.some((prefix) => beta.startsWith(prefix))) warn(`anthropic-beta ${beta}: a beta with no equivalent for this model; dropped`);
  }
  const version = options?.version;
  if (version !== undefined && version !== ANTHROPIC_VERSION) {
    warn(`anthropic-version ${version}: answered in the shapes of ${ANTHROPIC_VERSION}, the version the gateway speaks`);
  }
}
