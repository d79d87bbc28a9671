import type { FinishReason, ReasoningMetadata, Usage } from './chat-result.ts';

/**
 * One piece of a streamed answer. Providers turn their wire events into these; the HTTP
 * layer turns these into the client's wire format.
 */
export type StreamPart =
  /**
   * `json`: the text as a JSON string, as the provider wrote it, when it read the text from it
   * alone; an encoder may write it in place of the text escaped again.
   */
  | { type: 'text-delta'; text: string; json?: string }
  | { type: 'reasoning-delta'; text: string }
  /**
   * A reasoning block ends: the reasoning streamed since the previous block ended (none for a
   * block its provider hid), with what the provider attached to it (Anthropic's signature or
   * redacted data). Providers that attach nothing need not send it.
   */
  | { type: 'reasoning-end'; providerMetadata?: ReasoningMetadata }
  /** A tool call begins; `index` orders calls within the answer (0, 1, ...). */
  | { type: 'tool-call-start'; index: number; id: string; name: string }
  | { type: 'tool-call-delta'; index: number; argumentsDelta: string }
  /**
   * Same-format streams only (providers/provider.ts, `ProviderCall.relay`): the provider's own
   * events of one upstream read, ready for a client of that format (the fields the contract sets
   * already rewritten), and the text they carry, read only when the provider never reports usage.
   */
  | { type: 'relayed'; events: string; text: () => string }
  /** Last part of a successful stream. Usage is absent when the provider did not report it. */
  | { type: 'finish'; finishReason: FinishReason; usage?: Usage; stopSequence?: string };
