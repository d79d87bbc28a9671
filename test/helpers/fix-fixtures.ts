import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

const run = promisify(execFile);

/** A small project whose add() subtracts, and what a fix model may answer about it. */
export const BROKEN_FILES = [
  {
    path: 'src/math.js',
    content: 'export function add(a, b) {\n  return a - b;\n}\n\nexport function double(x) {\n  return add(x, x);\n}\n',
  },
  { path: 'package.json', content: '{\n  "name": "math",\n  "type": "module"\n}\n' },
];

export const FIX_INPUT = {
  files: BROKEN_FILES,
  command: 'node --test',
  output: 'AssertionError [ERR_ASSERTION]: add(2, 3) should be 5\n  actual: -1\n  expected: 5\n',
};

/** An edit whose SEARCH is not in the file (spacing differs inside the line): must be refused. */
export const BROKEN_EDIT = 'The sum subtracts.\n\nsrc/math.js\n```\n<<<<<<< SEARCH\n  return a-b;\n=======\n  return a + b;\n>>>>>>> REPLACE\n```\n';
/** The same fix, placeable exactly once. */
export const GOOD_EDIT =
  'add() subtracts instead of adding.\n\nsrc/math.js\n```\n<<<<<<< SEARCH\n  return a - b;\n=======\n  return a + b;\n>>>>>>> REPLACE\n```\n';

/** A fresh git repository holding `files` and `patch` as fix.patch, given to `work`, removed after it. */
export async function withPatchedRepository<T>(
  files: Array<{ path: string; content: string }>,
  patch: string,
  work: (directory: string, git: (...args: string[]) => Promise<unknown>) => Promise<T>,
): Promise<T> {
  const directory = await mkdtemp(join(tmpdir(), 'fix-patch-'));
  try {
    for (const file of files) {
      await mkdir(dirname(join(directory, file.path)), { recursive: true });
      await writeFile(join(directory, file.path), file.content);
    }
    await writeFile(join(directory, 'fix.patch'), patch);
    await run('git', ['init', '-q'], { cwd: directory });
    return await work(directory, (...args) => run(args[0]!, args.slice(1), { cwd: directory }));
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** Writes `files` into a fresh git repository and checks `patch` applies with git apply and patch -p1. */
export async function assertPatchApplies(files: Array<{ path: string; content: string }>, patch: string): Promise<void> {
  await withPatchedRepository(files, patch, async (_directory, command) => {
    await command('git', 'apply', '--check', 'fix.patch');
    await command('patch', '-p1', '--dry-run', '-i', 'fix.patch');
  });
}

/** A response's JSON body, or an error quoting what came instead. */
export async function jsonOf(response: Response): Promise<any> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`not JSON (${response.status}): ${text.slice(0, 500)}`);
  }
}

/** Every server-sent event of a response, read with a real SSE parser. */
export async function readEvents(response: Response, onEvent: (event: EventSourceMessage) => void = () => {}): Promise<EventSourceMessage[]> {
  const events: EventSourceMessage[] = [];
  const parser = createParser({
    onEvent(event) {
      events.push(event);
      onEvent(event);
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) parser.feed(decoder.decode(chunk, { stream: true }));
  return events;
}
