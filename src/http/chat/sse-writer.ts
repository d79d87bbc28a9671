import type { ServerResponse } from 'node:http';

/**
 * Writes server-sent events to a raw response, waiting when the client reads slower than we write.
 * Events written in one tick leave as one write: an upstream read usually completes several
 * events, and each response write costs a chunked-encoding frame and stream bookkeeping.
 */
export class SseWriter {
  private pending = '';
  /** Set while the response holds more than its high-water mark; settles on drain or close. */
  private drained: Promise<void> | undefined;
  private readonly flush = (): void => {
    const text = this.pending;
    this.pending = '';
    if (text === '' || this.closed || this.response.write(text)) return;
    this.drained ??= new Promise<void>((resolve) => {
      const done = () => {
        this.response.off('drain', done).off('close', done);
        this.drained = undefined;
        resolve();
      };
      this.response.on('drain', done).on('close', done);
    });
  };

  constructor(private readonly response: ServerResponse) {}

  open(headers: Record<string, string>): void {
    this.response.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // No flushHeaders(): the first events follow in the same tick and leave with the headers.
  }

  get closed(): boolean {
    return this.response.destroyed || this.response.writableEnded;
  }

  /**
   * Queues an event; it leaves once the promise jobs of this tick ran. Undefined when the client
   * keeps up; else a promise of the moment it drained what it was sent.
   */
  write(text: string): Promise<void> | undefined {
    if (text === '' || this.closed) return this.drained;
    if (this.pending === '') process.nextTick(this.flush);
    this.pending += text;
    return this.drained;
  }

  /** Sends what is queued and ends the response, in one write. */
  end(): void {
    const text = this.pending;
    this.pending = '';
    if (this.response.writableEnded) return;
    if (text === '' || this.response.destroyed) this.response.end();
    else this.response.end(text);
  }
}
