import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { configSchema, type ModelConfig, type ProviderConfig } from '../config/schema.ts';
import type { ChatRequest } from '../canonical/chat-request.ts';
import type { ChatResult } from '../canonical/chat-result.ts';
import type { StreamPart } from '../canonical/stream-part.ts';
import { readdirSync } from 'node:fs';
import { jsonReply, loadFixture, sseReply, startFixtureServer, type FixtureServer } from './fixture-server.ts';
import type { ProviderAdapter, ProviderCall } from '../providers/provider.ts';
import { ProviderError, type ProviderFailure } from '../providers/provider-error.ts';

/**
 * Test-only: the behaviour every provider adapter must show, run over real HTTP against
 * recorded answers. Each adapter's test file calls runProviderContract with its own subject.
 */

/** What the contract needs to know about one adapter. */
export interface ContractSubject {
  /** Adapter name, for test titles. */
  name: string;
  /** The path the adapter posts to, e.g. `/v1/chat/completions`. */
  path: string;
  /** The adapter's `__fixtures__/` directory. */
  fixtures: URL;
  /** Builds the adapter (and the model it serves) against a server at `url`. */
  create(url: string, timeoutMs: number): { provider: ProviderAdapter; model: ModelConfig };
  /** A recorded text answer: `${name}.json` and `${chunks}.chunks.txt`, and what they mean. */
  text: { json: string; chunks: string; result: ChatResult; parts: StreamPart[] };
  /** A recorded stream whose provider error comes before any content. */
  errorBeforeFirstPart: string;
  /** The provider's own error body for an HTTP status. */
  errorBody(status: number): unknown;
}

/** A one-message request. Carries both the old `extra` and the new `passThrough` field while the canonical request changes shape. */
export function contractRequest(text = 'hi'): ChatRequest {
  return {
    messages: [{ role: 'user', content: [{ type: 'text', text }] }],
    extra: {},
    passThrough: { format: 'openai', fields: {} },
  } as unknown as ChatRequest;
}

/**
 * The config of one provider (4 connections) and its one model, `${id}/model` upstream `upstream-model`,
 * behind every alias: `provider` and `model` give the rest of their fields, as in a config file.
 */
export function oneModelConfig(
  provider: { id: string } & Record<string, unknown>,
  model: Record<string, unknown>,
): { provider: ProviderConfig; model: ModelConfig } {
  const id = `${provider.id}/model`;
  const alias = { candidates: [id], reasoning: 'low' };
  const config = configSchema.parse({
    providers: [{ ...provider, connections: 4 }],
    models: [{ id, provider: provider.id, upstream: 'upstream-model', ...model }],
    aliases: { 'svc/fast': alias, 'svc/balanced': alias, 'svc/best': alias },
  });
  return { provider: config.providers[0]!, model: config.models[0]! };
}

export function contractCall(model: ModelConfig, options: Partial<ProviderCall> = {}): ProviderCall {
  return { request: contractRequest(), model, maxOutputTokens: 1_024, signal: new AbortController().signal, ...options };
}

/**
 * The parts of a stream, and the failure that ended it. A text delta's `json` (the text as the
 * provider wrote it) is checked against its text and left out, so parts compare by what they say.
 */
export async function collectParts(parts: AsyncIterable<StreamPart>): Promise<{ parts: StreamPart[]; error?: ProviderError }> {
  const collected: StreamPart[] = [];
  try {
    for await (const part of parts) {
      if (part.type !== 'text-delta' || part.json === undefined) {
        collected.push(part);
        continue;
      }
      assert.equal(JSON.parse(part.json), part.text, `a text delta's JSON string says its text: ${part.json}`);
      collected.push({ type: 'text-delta', text: part.text });
    }
    return { parts: collected };
  } catch (error) {
    assert.ok(error instanceof ProviderError, `expected a ProviderError, got ${String(error)}`);
    return { parts: collected, error };
  }
}

export function isFailure(failure: ProviderFailure) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof ProviderError, `expected a ProviderError, got ${String(error)}`);
    assert.equal(error.failure, failure, error.message);
    return true;
  };
}

/** Byte offset just past the event that carries `text`: replaying that much yields the first part. */
function endOfEventWith(chunks: string, text: string): number {
  const at = Buffer.from(chunks).indexOf(JSON.stringify(text).slice(1, -1));
  assert.ok(at >= 0, `the fixture does not contain ${text}`);
  return Buffer.from(chunks).indexOf('\n\n', at) + 2;
}

/** A fixture server and the subject's adapter (and model) against it. */
interface LiveSubject {
  server: FixtureServer;
  provider: ProviderAdapter;
  model: ModelConfig;
}

/**
 * For the tests of the enclosing describe: before them, starts a fixture server and the subject's
 * adapter against it and hands both to `use`; resets the server before each; closes both after them.
 */
function serveSubject(subject: ContractSubject, use: (live: LiveSubject) => void): void {
  let live: LiveSubject;
  before(async () => {
    const server = await startFixtureServer();
    live = { server, ...subject.create(server.url, 2_000) };
    use(live);
  });
  after(async () => {
    await live.provider.close();
    await live.server.close();
  });
  beforeEach(() => live.server.reset());
}

export function runProviderContract(subject: ContractSubject): void {
  describe(`${subject.name} adapter contract`, () => {
    let server: FixtureServer;
    let provider: ProviderAdapter;
    let model: ModelConfig;
    serveSubject(subject, (live) => ({ server, provider, model } = live));
    const fixture = (file: string) => loadFixture(subject.fixtures, file);
    const textChunks = () => fixture(`${subject.text.chunks}.chunks.txt`);
    const firstText = () => (subject.text.parts.find((part) => part.type === 'text-delta') as { text: string }).text;

    test('generate returns the canonical result of a recorded answer, usage included', async () => {
      server.reply(jsonReply(fixture(`${subject.text.json}.json`)));
      const result = await provider.generate(contractCall(model));
      assert.deepEqual(result, subject.text.result);
      assert.ok(result.usage, 'usage is reported');
      const sent = server.requests[0]!;
      assert.equal(sent.path, subject.path);
      assert.equal((sent.body as { model?: unknown }).model, model.upstream);
      assert.notEqual((sent.body as { stream?: unknown }).stream, true);
    });

    test('stream yields the canonical parts of a recorded stream and one finish with usage', async () => {
      server.reply(sseReply(textChunks()));
      const { parts, error } = await collectParts(provider.stream(contractCall(model)));
      assert.equal(error, undefined);
      assert.deepEqual(parts, subject.text.parts);
      assert.equal(parts.filter((part) => part.type === 'finish').length, 1);
      const last = parts.at(-1);
      assert.ok(last?.type === 'finish' && last.usage, 'usage is reported');
      assert.equal((server.requests[0]!.body as { stream?: unknown }).stream, true);
    });

    test('the same parts when the bytes arrive in 7-byte pieces', async () => {
      server.reply(sseReply(textChunks(), { pieceBytes: 7 }));
      // Events, not reads, decide the parts: a split event or character changes nothing.
      assert.deepEqual(await collectParts(provider.stream(contractCall(model))), { parts: subject.text.parts });
    });

    test('a provider error before any content is thrown from the first next(), so the router can fall back', async () => {
      server.reply(sseReply(fixture(`${subject.errorBeforeFirstPart}.chunks.txt`)));
      await assert.rejects(provider.stream(contractCall(model))[Symbol.asyncIterator]().next(), isFailure('unavailable'));
    });

    const statuses: Array<[number, ProviderFailure]> = [
      [401, 'auth'],
      [429, 'rate_limited'],
      [500, 'unavailable'],
      [503, 'unavailable'],
    ];
    for (const [status, failure] of statuses) {
      test(`HTTP ${status} -> ${failure}, from generate and from the first next() of stream`, async () => {
        const reply = jsonReply(subject.errorBody(status), status, { 'retry-after': '7' });
        server.reply(reply, reply);
        await assert.rejects(provider.generate(contractCall(model)), (error: unknown) => {
          isFailure(failure)(error);
          assert.equal((error as ProviderError).status, status);
          assert.equal((error as ProviderError).retryAfterSeconds, 7);
          return true;
        });
        await assert.rejects(provider.stream(contractCall(model))[Symbol.asyncIterator]().next(), isFailure(failure));
      });
    }

    test('a body or an event that is not JSON is an invalid response', async () => {
      server.reply(jsonReply('{"id":"broken","choices":[{"mess'), sseReply('data: {"id":"broken","type":"mess\n\n'));
      await assert.rejects(provider.generate(contractCall(model)), isFailure('invalid_response'));
      const { parts, error } = await collectParts(provider.stream(contractCall(model)));
      assert.deepEqual(parts, []);
      assert.equal(error?.failure, 'invalid_response');
    });

    test('a 200 JSON answer to a stream request is an invalid response, before any part, and its connection is closed', async () => {
      const body = fixture(`${subject.text.json}.json`);
      // Held open, the unread body would keep the connection busy until the provider timed out.
      server.reply({ ...jsonReply(body), holdAfterBytes: Buffer.byteLength(body) });
      await assert.rejects(provider.stream(contractCall(model))[Symbol.asyncIterator]().next(), isFailure('invalid_response'));
      await server.waitForAborted(1);
    });

    test('a body that stops for longer than the timeout is a timeout, and its connection is closed', async () => {
      const body = fixture(`${subject.text.json}.json`);
      server.reply({ ...jsonReply(body), holdAfterBytes: 10 });
      const quick = subject.create(server.url, 200);
      try {
        await assert.rejects(quick.provider.generate(contractCall(quick.model)), isFailure('timeout'));
        await server.waitForAborted(1);
      } finally {
        await quick.provider.close();
      }
    });

    test('aborting the signal cancels generate and closes the upstream connection', async () => {
      server.reply({ body: '', hang: true });
      const controller = new AbortController();
      const pending = provider.generate(contractCall(model, { signal: controller.signal }));
      await waitUntil(() => server.requests.length === 1);
      controller.abort();
      await assert.rejects(pending, isFailure('cancelled'));
      await server.waitForAborted(1);
    });

    test('a signal aborted before the call: cancelled, and the provider receives no request', async () => {
      const controller = new AbortController();
      controller.abort();
      const before = server.requests.length;
      await assert.rejects(provider.generate(contractCall(model, { signal: controller.signal })), isFailure('cancelled'));
      await assert.rejects(
        (async () => {
          for await (const part of provider.stream(contractCall(model, { signal: controller.signal }))) void part;
        })(),
        isFailure('cancelled'),
      );
      assert.equal(server.requests.length, before);
    });

    test('aborting the signal mid-stream cancels the stream and closes the upstream connection', async () => {
      const chunks = textChunks();
      server.reply(sseReply(chunks, { holdAfterBytes: endOfEventWith(chunks, firstText()) }));
      const controller = new AbortController();
      const iterator = provider.stream(contractCall(model, { signal: controller.signal }))[Symbol.asyncIterator]();
      let first = await iterator.next();
      while (!first.done && first.value.type !== 'text-delta') first = await iterator.next();
      assert.deepEqual(first.value, { type: 'text-delta', text: firstText() });
      controller.abort();
      await assert.rejects(iterator.next(), isFailure('cancelled'));
      await server.waitForAborted(1);
    });

    test('a consumer that stops reading early (return()) closes the upstream connection', async () => {
      const chunks = textChunks();
      server.reply(sseReply(chunks, { holdAfterBytes: endOfEventWith(chunks, firstText()) }));
      for await (const part of provider.stream(contractCall(model))) {
        if (part.type === 'text-delta') break;
      }
      await server.waitForAborted(1);
    });

    test('a provider error on a connection the provider holds open closes it', async () => {
      const chunks = fixture(`${subject.errorBeforeFirstPart}.chunks.txt`);
      server.reply(sseReply(chunks, { holdAfterBytes: Buffer.byteLength(chunks) }));
      await assert.rejects(provider.stream(contractCall(model))[Symbol.asyncIterator]().next(), isFailure('unavailable'));
      await server.waitForAborted(1);
    });

    test('a stream read to its end releases the connection for the next call', async () => {
      server.reply(sseReply(textChunks()), sseReply(textChunks()), jsonReply(fixture(`${subject.text.json}.json`)));
      // The pool frees a connection on the turn after the body ends; a call in the same turn opens another.
      const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
      await collectParts(provider.stream(contractCall(model)));
      await nextTurn();
      await collectParts(provider.stream(contractCall(model)));
      await nextTurn();
      await provider.generate(contractCall(model));
      assert.equal(server.finishedCount, 3);
      assert.equal(server.abortedCount, 0);
      const sockets = new Set(server.requests.map((request) => request.remotePort));
      assert.equal(sockets.size, 1, 'one keep-alive connection served every call');
    });
  });
}

/** A recorded stream and the parts it must give, up to the failure that ends it if it fails. */
export interface StreamFixtureCase {
  fixture: string;
  parts: StreamPart[];
  failure?: { failure: ProviderFailure; message: RegExp };
}

/** A recorded non-streaming body and the result (or failure) it must give. */
export interface ResponseFixtureCase {
  fixture: string;
  result?: ChatResult;
  failure?: { failure: ProviderFailure; message: RegExp };
}

/**
 * Replays every fixture of an adapter through it over HTTP: streams whole and in 5-byte
 * pieces, bodies as sent. Fails when a file in the fixtures folder has no case.
 */
export function runFixtureReplays(subject: ContractSubject, streams: StreamFixtureCase[], responses: ResponseFixtureCase[]): void {
  describe(`${subject.name} recorded answers`, () => {
    let server: FixtureServer;
    let provider: ProviderAdapter;
    let model: ModelConfig;
    serveSubject(subject, (live) => ({ server, provider, model } = live));

    test('every fixture file has a replay case', () => {
      const covered = new Set([...streams.map((c) => `${c.fixture}.chunks.txt`), ...responses.map((c) => `${c.fixture}.json`)]);
      assert.deepEqual(
        readdirSync(subject.fixtures).filter((file) => !covered.has(file)),
        [],
      );
    });

    for (const testCase of streams) {
      for (const pieceBytes of [0, 5]) {
        test(`${testCase.fixture}.chunks.txt${pieceBytes ? ' in 5-byte pieces' : ''}`, async () => {
          server.reply(sseReply(loadFixture(subject.fixtures, `${testCase.fixture}.chunks.txt`), { pieceBytes }));
          const { parts, error } = await collectParts(provider.stream(contractCall(model)));
          assert.equal(server.requests[0]!.path, subject.path);
          assert.equal((server.requests[0]!.body as { stream?: unknown }).stream, true);
          assert.deepEqual(parts, testCase.parts);
          if (testCase.failure) {
            assert.equal(error?.failure, testCase.failure.failure, error?.message ?? 'the stream did not fail');
            assert.match(error.message, testCase.failure.message);
          } else {
            assert.equal(error, undefined, error?.message);
          }
        });
      }
    }

    for (const testCase of responses) {
      test(`${testCase.fixture}.json`, async () => {
        server.reply(jsonReply(loadFixture(subject.fixtures, `${testCase.fixture}.json`)));
        const pending = provider.generate(contractCall(model));
        if (testCase.failure) {
          const expected = testCase.failure;
          await assert.rejects(pending, (error: unknown) => isFailure(expected.failure)(error) && expected.message.test((error as Error).message));
        } else {
          assert.deepEqual(await pending, testCase.result);
        }
      });
    }
  });
}

async function waitUntil(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !condition(); attempt++) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.ok(condition(), 'condition never became true');
}
