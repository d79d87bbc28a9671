import type { ModelConfig } from '../config/schema.ts';
import type { ErrorCode } from '../errors/catalog.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { Usage } from '../canonical/chat-result.ts';
import type { StreamPart } from '../canonical/stream-part.ts';
import type { PromptMeasure } from '../tokens/token-estimate.ts';
import type { MeteredRequest } from './request-meter.ts';
import { estimateUsage } from './usage-estimate.ts';

/** The text a part carries to the client, for a fair count when the provider never reports usage. */
function partText(part: StreamPart): string {
  switch (part.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return part.text;
    case 'tool-call-start':
      return part.name;
    case 'tool-call-delta':
      return part.argumentsDelta;
    case 'relayed':
      return part.text();
    case 'reasoning-end':
    case 'finish':
      return '';
  }
}

/**
 * The outcome of one streamed answer, kept as it goes: what was forwarded, then exactly one
 * ending (succeeded, cancelled or failed) that charges the usage the provider reported, else a
 * fair estimate of the prompt and what was forwarded, and records the attempt. The request's
 * lifecycle settles it (http/request-lifecycle.ts).
 */
export class StreamedAnswer {
  private forwardedText = '';
  /** Relayed reads: their text is read only for an estimate. */
  private readonly relayed: Array<() => string> = [];

  constructor(
    private readonly metered: MeteredRequest,
    private readonly model: ModelConfig,
    private readonly prompt: PromptMeasure,
    private readonly startedAt: number,
  ) {}

  forwarded(part: StreamPart): void {
    if (part.type === 'relayed') this.relayed.push(part.text);
    else this.forwardedText += partText(part);
  }

  /** Everything forwarded; relayed text after the rest (an estimate counts tokens, which their order barely moves). */
  private get sentText(): string {
    return this.relayed.length === 0 ? this.forwardedText : this.forwardedText + this.relayed.map((text) => text()).join('');
  }

  /** The stream finished: returns the usage charged (reported, else estimated). */
  async succeeded(reported: Usage | undefined): Promise<Usage> {
    const usage = reported ?? (await estimateUsage(this.prompt, this.model, this.sentText));
    this.metered.answeredBy(this.model, usage, !reported);
    this.record('succeeded');
    return usage;
  }

  /** The client left: what was generated so far is charged. */
  async cancelled(): Promise<void> {
    await this.chargeWhatWasSent();
    this.record('cancelled', 'request_cancelled');
  }

  async failed(error: GatewayError): Promise<void> {
    await this.chargeWhatWasSent();
    this.record('failed', error.code, error.message);
  }

  private async chargeWhatWasSent(): Promise<void> {
    if (!this.metered.hasAnswer) this.metered.answeredBy(this.model, await estimateUsage(this.prompt, this.model, this.sentText), true);
  }

  private record(outcome: 'succeeded' | 'failed' | 'cancelled', errorCode?: ErrorCode, detail?: string): void {
    this.metered.attempts.push({
      model: this.model.id,
      outcome,
      ...(errorCode ? { errorCode } : {}),
      ...(detail ? { detail } : {}),
      latencyMs: Date.now() - this.startedAt,
    });
  }
}
