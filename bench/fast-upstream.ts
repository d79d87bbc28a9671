/**
 * A minimal OpenAI chat-completions upstream that answers at once, for the benchmark.
 * Run as its own process: `node --import tsx bench/fast-upstream.ts` prints {"url","pid"}
 * as one JSON line on stdout, then serves until SIGTERM or until its stdin closes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const ID = 'chatcmpl-bench000000000000000000000';
const MODEL = 'bench-echo-1';
const PIECES = ['Hello', ' from', ' the', ' fast', ' upstream.'];
const USAGE = {
  prompt_tokens: 24,
  completion_tokens: PIECES.length,
  total_tokens: 24 + PIECES.length,
  prompt_tokens_details: { cached_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0 },
};

function completionBody(): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: ID,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content: PIECES.join(''), refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: USAGE,
    }),
  );
}

/** The whole event stream: role chunk, content chunks, finish chunk, usage chunk (if asked), [DONE]. */
function streamBody(includeUsage: boolean): Buffer {
  const base = { id: ID, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: MODEL };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    JSON.stringify({
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
    });
  const events = [chunk({ role: 'assistant', content: '' }), ...PIECES.map((piece) => chunk({ content: piece })), chunk({}, 'stop')];
  if (includeUsage) events.push(JSON.stringify({ ...base, choices: [], usage: USAGE }));
  events.push('[DONE]');
  return Buffer.from(events.map((data) => `data: ${data}\n\n`).join(''));
}

// Built once: the benchmark measures the gateway, not this server.
const COMPLETION = completionBody();
const STREAM_WITH_USAGE = streamBody(true);
const STREAM_WITHOUT_USAGE = streamBody(false);

function answer(request: IncomingMessage, response: ServerResponse, raw: string): void {
  let body: { stream?: unknown; stream_options?: { include_usage?: unknown } };
  try {
    body = JSON.parse(raw);
  } catch {
    response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"body is not JSON"}}');
    return;
  }
  if (body.stream === true) {
    // No content-length: chunked, as real event streams are; but every event in one write.
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.end(body.stream_options?.include_usage === true ? STREAM_WITH_USAGE : STREAM_WITHOUT_USAGE);
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': COMPLETION.length }).end(COMPLETION);
}

/**
 * When the headers of the last request of over a megabyte arrived (ms since the epoch, sub-ms), for
 * bench/huge-prompts.ts; handed out once, so a request that never came reads null, not the one before.
 */
let largeRequestAt: number | null = null;

const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/bench/large-request-at') {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ at: largeRequestAt }));
    largeRequestAt = null;
    return;
  }
  if (Number(request.headers['content-length']) > 1024 * 1024) largeRequestAt = performance.timeOrigin + performance.now();
  if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
    request.resume();
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
    return;
  }
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => answer(request, response, Buffer.concat(chunks).toString('utf8')));
});
// Longer than the clients' keep-alive, so connections are reused rather than raced.
server.keepAliveTimeout = 120_000;
server.headersTimeout = 125_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}`, pid: process.pid })}\n`);
});

function shutdown(): void {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1_000).unref();
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
// The parent holds our stdin: when it goes away, so do we.
process.stdin.once('close', shutdown).resume();
