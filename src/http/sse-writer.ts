import type { ServerResponse } from 'node:http';

/** Writes server-sent events to a raw response, waiting when the client reads slower than we write. */
export class SseWriter {
  constructor(private readonly response: ServerResponse) {}

  open(headers: Record<string, string>): void {
    this.response.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // No flushHeaders(): the first event follows in the same tick and leaves with the headers.
  }

  get closed(): boolean {
    return this.response.destroyed || this.response.writableEnded;
  }

  /** Undefined when the event is on its way; else a promise of the moment the client drained it. */
  write(text: string): Promise<void> | undefined {
    if (text === '' || this.closed) return undefined;
    if (this.response.write(text)) return undefined;
    return new Promise<void>((resolve) => {
      const done = () => {
        this.response.off('drain', done).off('close', done);
        resolve();
      };
      this.response.on('drain', done).on('close', done);
    });
  }

  end(): void {
    if (!this.response.writableEnded) this.response.end();
  }
}
