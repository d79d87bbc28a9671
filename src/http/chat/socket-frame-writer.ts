import type { WebSocket } from 'ws';
import type { EventWriter } from './chat-exchange.ts';

/** Bytes a socket may hold unsent before the writer waits for its client. */
const HIGH_WATER = 1 << 20;

/**
 * Writes a streamed answer to a WebSocket: each server-sent event the encoder made leaves as one
 * text frame holding its data, the JSON an HTTP client reads from the event's `data:` line.
 * `seen` is shown each event's data as it leaves; `ended` is called once, when the answer ends.
 */
export class SocketFrameWriter implements EventWriter {
  private ended = false;
  private drained: Promise<void> | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly seen: (data: string) => void,
    private readonly onEnd: () => void,
  ) {}

  get closed(): boolean {
    return this.ended || this.socket.readyState !== this.socket.OPEN;
  }

  write(text: string): Promise<void> | undefined {
    if (text === '' || this.closed) return this.drained;
    let last: string | undefined;
    for (const data of eventData(text)) {
      if (last !== undefined) this.socket.send(last);
      this.seen(data);
      last = data;
    }
    if (last === undefined) return this.drained;
    if (this.drained || this.socket.bufferedAmount < HIGH_WATER) {
      this.socket.send(last);
      return this.drained;
    }
    // The client reads slower than we write: wait until this frame has left.
    this.drained = new Promise<void>((resolve) =>
      this.socket.send(last, () => {
        this.drained = undefined;
        resolve();
      }),
    );
    return this.drained;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd();
  }
}

/**
 * The data of each event in server-sent-event text as the gateway's encoders write it: events
 * apart by a blank line, one `data:` line each (their JSON has no raw newline).
 */
export function eventData(text: string): string[] {
  const data: string[] = [];
  for (const event of text.split('\n\n')) {
    for (const line of event.split('\n')) if (line.startsWith('data: ')) data.push(line.slice('data: '.length));
  }
  return data;
}
