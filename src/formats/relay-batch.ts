import type { StreamPart } from '../canonical/stream-part.ts';

/**
 * The events of one upstream read that a same-format stream relays, gathered into one `relayed`
 * part: written with one socket write, read for their text only if an estimate needs it.
 * `text` is told each event's text, or a reader of it (Anthropic's, read from its bytes later).
 */
export class RelayBatch {
  private events = '';
  private texts: Array<string | (() => string)> = [];

  add(event: string, text: string | (() => string)): void {
    this.events += event;
    this.texts.push(text);
  }

  /** The gathered events as one part (none when there are none), and a fresh batch. */
  take(): StreamPart[] {
    if (this.events === '') return [];
    const texts = this.texts;
    const part: StreamPart = {
      type: 'relayed',
      events: this.events,
      text: () => texts.map((text) => (typeof text === 'string' ? text : text())).join(''),
    };
    this.events = '';
    this.texts = [];
    return [part];
  }
}
