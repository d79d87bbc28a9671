/**
 * `node --import tsx bench/validate-bodies.ts`: what reading a request body costs, the schema
 * readers of this tree against those of an older revision (the hand-written readers of
 * 43731ee by default; BENCH_BASE=<rev> for another). Each parser turns bodies as JSON.parse makes
 * them into the canonical request, rounds alternating old and new so drift hits both alike; the
 * median of the rounds is printed as Markdown. Also the first parse of each format (this tree
 * compiles its validators then) and the validators alone.
 *
 * Environment (all optional): BENCH_BASE (43731ee), BENCH_ROUNDS (9), BENCH_ROUND_MS (300).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { intEnv } from './int-env.ts';

const BASE = process.env.BENCH_BASE ?? '43731ee';
const ROUNDS = intEnv('BENCH_ROUNDS', 9);
const ROUND_MS = intEnv('BENCH_ROUND_MS', 300);
const ROOT = resolve(import.meta.dirname, '..');

type Parse = (body: unknown) => unknown;
interface Parsers {
  chat: Parse;
  messages: Parse;
  responses: Parse;
}

async function parsersAt(root: string): Promise<Parsers> {
  const load = (path: string) => import(pathToFileURL(join(root, 'src/formats', path)).href);
  const [chat, messages, responses] = await Promise.all([
    load('openai-chat/parse-chat-request.ts'),
    load('anthropic-messages/parse-messages-request.ts'),
    load('openai-responses/parse-responses-request.ts'),
  ]);
  return { chat: chat.parseChatCompletionRequest, messages: messages.parseMessagesRequest, responses: responses.parseResponsesRequest };
}

/** The older revision's src/, beside this tree's node_modules. */
function checkout(revision: string): string {
  const directory = mkdtempSync(join(tmpdir(), 'bench-bodies-'));
  const archive = execFileSync('git', ['archive', revision, 'src', 'package.json'], { cwd: ROOT, maxBuffer: 256 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', directory], { input: archive });
  symlinkSync(join(ROOT, 'node_modules'), join(directory, 'node_modules'));
  return directory;
}

/** A typical small chat request: a system prompt, three turns, one tool (about 1 KB). */
const TYPICAL_CHAT = {
  model: 'svc/fast',
  temperature: 0.2,
  max_tokens: 512,
  stream: true,
  stream_options: { include_usage: true },
  messages: [
    { role: 'system', content: 'You are a helpful assistant. Answer briefly and precisely, citing sources when you can.' },
    { role: 'user', content: 'What is the capital of France? Please also tell me something about its history, in two sentences.' },
    { role: 'assistant', content: 'Paris. It has been the capital since the 10th century, under the Capetian kings, with a few interruptions.' },
    { role: 'user', content: [{ type: 'text', text: 'And of Germany? Tell me about the reunification of 1990 too, briefly.' }] },
  ],
  tools: [
    {
      type: 'function',
      function: {
        name: 'search',
        description: 'Search the web for pages about a query',
        parameters: { type: 'object', properties: { q: { type: 'string', description: 'The query' } }, required: ['q'] },
      },
    },
  ],
  routing: { fallback: true },
};

const fixture = (name: string) => readFileSync(join(ROOT, 'test/fixtures', name), 'utf8');

const CASES: Array<{ name: string; format: keyof Parsers; text: string }> = [
  { name: 'chat, typical', format: 'chat', text: JSON.stringify(TYPICAL_CHAT) },
  { name: 'messages, Claude Code', format: 'messages', text: fixture('claude-code-messages-request.json') },
  { name: 'responses, Codex', format: 'responses', text: fixture('codex-responses-request.json') },
];

/** Microseconds per parse over one round, cycling through copies as JSON.parse made them. */
function round(parse: Parse, copies: unknown[]): number {
  let count = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(ROUND_MS) * 1_000_000n;
  let now = start;
  while (now < end) {
    for (let index = 0; index < 256; index++) parse(copies[(count + index) % copies.length]);
    count += 256;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / count / 1_000;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function firstParseMs(parse: Parse, text: string): number {
  const start = performance.now();
  parse(JSON.parse(text));
  return performance.now() - start;
}

const directory = checkout(BASE);
try {
  const [older, newer] = await Promise.all([parsersAt(directory), parsersAt(ROOT)]);
  const { bodyValidator } = await import('../src/formats/validate-body.ts');
  const schemas = {
    chat: (await import('../src/formats/openai-chat/chat-request-schema.ts')).chatCompletionRequestSchema,
    messages: (await import('../src/formats/anthropic-messages/messages-request-schema.ts')).messagesRequestSchema,
    responses: (await import('../src/formats/openai-responses/responses-request-schema.ts')).responsesRequestSchema,
  };
  const rows: string[] = [];
  for (const { name, format, text } of CASES) {
    const first = firstParseMs(newer[format], text);
    const validate = bodyValidator(schemas[format]);
    const copies = Array.from({ length: 64 }, () => JSON.parse(text) as unknown);
    const times = { old: [] as number[], new: [] as number[], validator: [] as number[] };
    for (let index = 0; index < ROUNDS; index++) {
      times.old.push(round(older[format], copies));
      times.new.push(round(newer[format], copies));
      times.validator.push(round(validate, copies));
    }
    const [oldMedian, newMedian] = [median(times.old), median(times.new)];
    rows.push(
      `| ${name} | ${(text.length / 1024).toFixed(1)} KB | ${oldMedian.toFixed(2)} | ${newMedian.toFixed(2)} | ${(newMedian / oldMedian).toFixed(2)} | ${median(times.validator).toFixed(2)} | ${first.toFixed(0)} |`,
    );
  }
  console.log(`Body readers: ${BASE} (old) against this tree (new), median of ${ROUNDS} rounds of ${ROUND_MS} ms, Node ${process.version}\n`);
  console.log('| body | size | old µs | new µs | new/old | of which schema check µs | first parse ms (compiles) |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
