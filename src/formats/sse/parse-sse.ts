import { StringDecoder } from 'node:string_decoder';

/** One server-sent event as dispatched by a blank line. */
export interface SseEvent {
  /** Value of the `event:` field; undefined when the event had none (the spec's "message"). */
  event?: string;
  /** All `data:` lines of the event joined with "\n". */
  data: string;
  /** Value of the last `id:` field, when there was one. */
  id?: string;
}

/**
 * Splits a byte stream into server-sent events, following the WHATWG parsing rules:
 * lines end in \r\n, \n or \r; `:` lines are comments; an event is dispatched on a blank
 * line and only when it has data. A trailing event without its blank line is dropped,
 * because a connection that died mid-event must not pass for a complete one.
 */
export async function* parseSse(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const decoder = new SseDecoder();
  for await (const chunk of chunks) yield* decoder.push(chunk);
  yield* decoder.finish();
}

/**
 * The same parser as a synchronous stage: bytes in, the events they complete out. Adapters
 * run it inside their one stream loop, so an event costs no promise of its own.
 */
export class SseDecoder {
  private readonly lines = new LineSplitter();
  private readonly builder = new EventBuilder();

  /** The events completed by this chunk (often several: one upstream read carries many). */
  push(chunk: Uint8Array | string): SseEvent[] {
    return this.dispatch(this.lines.push(chunk));
  }

  /** Once the source ended: events completed by its last bytes. */
  finish(): SseEvent[] {
    return this.dispatch(this.lines.finish());
  }

  private dispatch(lines: string[]): SseEvent[] {
    const events: SseEvent[] = [];
    for (const line of lines) {
      const event = this.builder.addLine(line);
      if (event) events.push(event);
    }
    return events;
  }
}

/** Turns arbitrary chunks into complete lines, keeping a partial line (and a split \r\n) for later. */
class LineSplitter {
  // Keeps a multi-byte character that straddles two chunks intact. Node's StringDecoder, not
  // TextDecoder: 0.8-0.9 µs for a 5.5 KB read against 5.2-5.8 (TextDecoder's streaming goes
  // through ICU's converter).
  private readonly decoder = new StringDecoder('utf8');
  private started = false;
  private pending = '';
  private previousEndedWithCarriageReturn = false;

  push(chunk: Uint8Array | string): string[] {
    return this.split(typeof chunk === 'string' ? chunk : this.decoded(this.decoder.write(chunk)));
  }

  /** Whatever is left once the source ended: a last line without its terminator. */
  finish(): string[] {
    const rest = this.split(this.decoded(this.decoder.end()));
    if (this.pending !== '') rest.push(this.pending);
    this.pending = '';
    return rest;
  }

  /** A byte-order mark that starts the stream is not part of it. */
  private decoded(text: string): string {
    if (this.started || text === '') return text;
    this.started = true;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  private split(text: string): string[] {
    let start = 0;
    // A \r that ended the previous chunk already closed its line; the \n that follows is part of it.
    if (this.previousEndedWithCarriageReturn && text.startsWith('\n')) start = 1;
    if (text.length > 0) this.previousEndedWithCarriageReturn = false;
    const lines: string[] = [];
    // Found with indexOf, not character by character: most providers end lines with \n alone.
    let lineFeed = text.indexOf('\n', start);
    let carriageReturn = text.indexOf('\r', start);
    while (lineFeed !== -1 || carriageReturn !== -1) {
      let end = carriageReturn === -1 || (lineFeed !== -1 && lineFeed < carriageReturn) ? lineFeed : carriageReturn;
      lines.push(this.pending + text.slice(start, end));
      this.pending = '';
      if (end === carriageReturn) {
        if (end + 1 === text.length) this.previousEndedWithCarriageReturn = true;
        else if (text.charCodeAt(end + 1) === 10) end++;
      }
      start = end + 1;
      if (lineFeed !== -1 && lineFeed < start) lineFeed = text.indexOf('\n', start);
      if (carriageReturn !== -1 && carriageReturn < start) carriageReturn = text.indexOf('\r', start);
    }
    this.pending += text.slice(start);
    return lines;
  }
}

/** Accumulates fields of one event until a blank line dispatches it. */
class EventBuilder {
  private dataLines: string[] = [];
  private eventName: string | undefined;
  private lastId: string | undefined;

  addLine(line: string): SseEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    // One leading space is not part of the value.
    const value = colon === -1 ? '' : line.slice(line.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1);
    if (field === 'data') this.dataLines.push(value);
    else if (field === 'event') this.eventName = value;
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    // `retry` and unknown fields are ignored: we never reconnect.
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const dataLines = this.dataLines;
    const eventName = this.eventName;
    this.dataLines = [];
    this.eventName = undefined;
    if (dataLines.length === 0) return undefined;
    const event: SseEvent = { data: dataLines.join('\n') };
    if (eventName !== undefined && eventName !== '') event.event = eventName;
    if (this.lastId !== undefined) event.id = this.lastId;
    return event;
  }
}
