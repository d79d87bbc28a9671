import { Worker, type ResourceLimits, type TransferListItem, type WorkerOptions } from 'node:worker_threads';
import { whileThreadStarts } from './serving-heap.ts';

interface Pending {
  resolve(reply: unknown): void;
  reject(error: Error): void;
}

interface Running {
  worker: Worker;
  pending: Map<number, Pending>;
  idle: NodeJS.Timeout | null;
}

/**
 * The entry of a thread, beside the module that starts it: `<name>.mjs` in the sources, `<name>.js`
 * in the build, or `<name>.cjs` for an entry built as CommonJS (`scripts/bundle-server.mjs` bundles
 * each such entry into dist/server, beside the chunks).
 */
export function threadEntry(name: string, besideModule: string, built: 'js' | 'cjs' = 'js'): URL {
  return new URL(`./${name}.${besideModule.endsWith('.ts') ? 'mjs' : built}`, besideModule);
}

/**
 * Every thread the gateway starts starts here, so that V8's flags are right while it starts:
 * `awaited` for a thread a request waits for (see `whileThreadStarts`, serving-heap.ts).
 */
export function startThread(entry: URL | string, options: WorkerOptions, awaited = false): Worker {
  const worker = new Worker(entry, options);
  whileThreadStarts(worker, awaited);
  return worker;
}

/**
 * A worker thread answering jobs by id (its replies are `{ id, ... }`). It starts on first use and
 * keeps the process alive only while a job is pending; after `idleMs` without one it stops, giving
 * its memory back (tables, buffers), and the next job starts it again. If it fails or exits, every
 * pending job is rejected and the next job starts a fresh thread.
 */
export class ThreadJobs<Reply extends { id: number }> {
  private running: Running | null = null;
  private nextId = 0;

  /**
   * `onStop` runs when the thread stops (idle, failed or exited), to give up what was kept for it;
   * `resourceLimits` are the thread's heap sizes (Node's defaults when not given); `awaited`, a
   * request waits for the thread's start (see `startThread`).
   */
  constructor(
    private readonly entry: URL,
    private readonly what: string,
    private readonly idleMs: number,
    private readonly options: { onStop?: () => void; resourceLimits?: ResourceLimits; awaited?: boolean } = {},
  ) {}

  private onStop(): void {
    this.options.onStop?.();
  }

  /** Whether the thread is running. */
  get started(): boolean {
    return this.running !== null;
  }

  /**
   * Starts the thread if it is not running, so that it is ready for a job likely to come;
   * `awaited`, a request waits for that job (see `startThread`).
   */
  start(awaited = this.options.awaited ?? false): Worker {
    if (this.running) return this.running.worker;
    // No flags of the parent's (a TypeScript loader, a profiler): the entry is plain JavaScript.
    const { resourceLimits } = this.options;
    const worker = startThread(this.entry, { execArgv: [], ...(resourceLimits && { resourceLimits }) }, awaited);
    const running: Running = { worker, pending: new Map(), idle: null };
    const fail = (error: Error) => {
      if (this.running === running) {
        this.running = null;
        this.onStop();
      }
      for (const { reject } of running.pending.values()) reject(error);
      running.pending.clear();
    };
    running.worker.on('message', (reply: Reply) => {
      running.pending.get(reply.id)?.resolve(reply);
      this.settled(running, reply.id);
    });
    running.worker.on('error', fail);
    running.worker.on('exit', (code) => fail(new Error(`the ${this.what} thread exited (${code})`)));
    // Idle, it keeps no process alive (unref after the listeners are added: before them, it did not hold).
    running.worker.unref();
    this.running = running;
    this.stopWhenIdle(running);
    return running.worker;
  }

  /** A new job: its id, to send its messages with, and its reply. */
  open(): { id: number; reply: Promise<Reply> } {
    this.start();
    const running = this.running!;
    const id = this.nextId++;
    if (running.pending.size === 0) running.worker.ref();
    if (running.idle) clearTimeout(running.idle);
    running.idle = null;
    const reply = new Promise<Reply>((resolve, reject) => running.pending.set(id, { resolve: resolve as (reply: unknown) => void, reject }));
    return { id, reply };
  }

  post(message: Record<string, unknown>, transfer?: readonly TransferListItem[]): void {
    this.running?.worker.postMessage(message, transfer);
  }

  /** Stops waiting for a job's reply; its promise never settles. */
  forget(id: number): void {
    if (this.running) this.settled(this.running, id);
  }

  private settled(running: Running, id: number): void {
    running.pending.delete(id);
    if (running.pending.size > 0) return;
    running.worker.unref();
    this.stopWhenIdle(running);
  }

  private stopWhenIdle(running: Running): void {
    if (running.idle) clearTimeout(running.idle);
    running.idle = setTimeout(() => {
      if (this.running === running) {
        this.running = null;
        this.onStop();
      }
      void running.worker.terminate();
    }, this.idleMs);
    running.idle.unref();
  }
}
