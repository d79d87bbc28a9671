import type { Usage } from '../../canonical/chat-result.ts';
import type { StreamPart } from '../../canonical/stream-part.ts';
import { renderOpenAIUsage } from './render-chat-completion.ts';

/** The fields every chunk of one answer starts with, up to "choices": built once per answer. */
export function chunkHead(id: string, created: number, model: string): string {
  return `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},`;
}

/**
 * Turns canonical stream parts into OpenAI chat.completion.chunk SSE events, following the
 * contract's streaming rules: role chunk first, pieces, an empty delta with finish_reason,
 * an optional usage-only chunk, then [DONE].
 */
export class ChatChunkEncoder {
  private readonly head: string;

  constructor(id: string, created: number, model: string) {
    this.head = chunkHead(id, created, model);
  }

  private event(choices: string, extra = ''): string {
    return `data: ${this.head}"choices":${choices}${extra}}\n\n`;
  }

  private delta(delta: unknown, finishReason: string | null = null): string {
    return this.event(`[{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":${JSON.stringify(finishReason)}}]`);
  }

  /** The first chunk: role assistant, empty content. */
  start(): string {
    return this.delta({ role: 'assistant', content: '' });
  }

  /** Encode one part; returns '' for parts with nothing to send. */
  part(part: StreamPart): string {
    switch (part.type) {
      case 'text-delta':
        if (!part.text) return '';
        // The provider's own JSON string for the text, when it came with one: not escaped again.
        return part.json === undefined
          ? this.delta({ content: part.text })
          : this.event(`[{"index":0,"delta":{"content":${part.json}},"logprobs":null,"finish_reason":null}]`);
      case 'reasoning-delta':
        return part.text ? this.delta({ reasoning_content: part.text }) : '';
      case 'tool-call-start':
        return this.delta({
          tool_calls: [{ index: part.index, id: part.id, type: 'function', function: { name: part.name, arguments: '' } }],
        });
      case 'tool-call-delta':
        return part.argumentsDelta ? this.delta({ tool_calls: [{ index: part.index, function: { arguments: part.argumentsDelta } }] }) : '';
      case 'relayed':
        return part.events;
      case 'reasoning-end':
        // What a provider attached to its reasoning (signatures) means something to it alone; OpenAI has no field for it.
        return '';
      case 'finish':
        return this.delta({}, part.finishReason);
    }
  }

  /** The usage-only chunk for stream_options.include_usage. */
  usage(usage: Usage): string {
    return this.event('[]', `,"usage":${JSON.stringify(renderOpenAIUsage(usage))}`);
  }

  done(): string {
    return 'data: [DONE]\n\n';
  }
}
