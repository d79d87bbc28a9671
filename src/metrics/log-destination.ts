import { fstatSync } from 'node:fs';
import pino from 'pino';

/** Lines gathered before a write (under sonic-boom's 16 KiB maxWrite). */
const GATHER_BYTES = 8 * 1024;
/** ...and what has gathered goes out at least this often. */
const GATHER_MS = 100;

/**
 * Where the log goes: standard output, lines gathered up to GATHER_BYTES, or GATHER_MS after the
 * first of them, before each write. One write per line cost ~0.06 ms of CPU a request under load
 * into a pipe (wrk, 50 connections, stdout into `cat`: 0.32-0.35 ms a request against 0.25-0.30
 * gathered, measured 2026-11-28) and one syscall a request into a file (~3 µs of the event
 * loop's samples a request, 1.5% of a JSON request's CPU).
 *
 * Redirected to a file, the writes are made on the event loop (a copy into the page cache, never a
 * wait on a reader): pino's default hands every write to the thread pool, and on a gateway pinned
 * to one core that thread preempts the event loop for each (in profiles of the PostgreSQL mode
 * under load its writes held 6-8% of the event loop's samples, 0.7-0.9% written synchronously).
 * To a pipe, a socket or a terminal (a container's log driver, journald), whose reader may stall,
 * they stay off the event loop.
 *
 * What is still gathered when the process exits is written then; a process killed outright loses
 * at most the last GATHER_MS of lines.
 */
export function logDestination(): [pino.DestinationStream] | [] {
  let file: boolean;
  try {
    file = fstatSync(1).isFile();
  } catch {
    return [];
  }
  const gathering = pino.destination({ dest: 1, sync: file, minLength: GATHER_BYTES });
  let timer: NodeJS.Timeout | undefined;
  const writeGathered = () => {
    timer = undefined;
    try {
      gathering.flush();
    } catch {
      // Destroyed (the process is ending): what it held was written as it closed.
      return;
    }
    // sonic-boom 4 ignores a flush asked while a write is on its way, and what gathered behind
    // that write would wait for the next line (or the exit): look again once it may be done.
    if ((gathering as unknown as { _writing?: boolean })._writing) timer ??= setTimeout(writeGathered, GATHER_MS).unref();
  };
  // pino flushes only its asynchronous destinations on exit.
  if (file) process.once('exit', writeGathered);
  return [
    {
      write(line: string) {
        // Looked up each time: pino stops a destination whose reader went away by replacing its write.
        gathering.write(line);
        timer ??= setTimeout(writeGathered, GATHER_MS).unref();
      },
    },
  ];
}
