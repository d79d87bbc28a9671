import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { createSqliteStore } from '../src/storage/sqlite/sqlite-store.ts';
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

/**
 * The Responses API over WebSocket (GET /v1/responses), driven by a `ws` client the way Codex's
 * built-in provider drives it: a prewarm, then turns naming the previous response and sending
 * only their new items, each event a JSON text frame.
 */
let harness: Harness;

before(async () => {
  harness = await startHarness({ timeoutMs: 5_000 });
});
after(() => harness.close());
beforeEach(() => harness.fake.reset());

/** A client socket whose frames are read in order, as parsed JSON. */
class Client {
  private readonly frames: any[] = [];
  private wake: (() => void) | null = null;
  closed: { code: number; reason: string } | null = null;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      assert.equal(isBinary, false, 'every event is a text frame');
      this.frames.push(JSON.parse(data.toString()));
      this.wake?.();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake?.();
    });
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  async next(): Promise<any> {
    while (this.frames.length === 0) {
      if (this.closed) throw new Error(`the socket closed (${this.closed.code} ${this.closed.reason}) before the next frame`);
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
    return this.frames.shift();
  }

  /** The frames of one answer, up to its last (completed, incomplete, failed, or an error). */
  async answer(): Promise<any[]> {
    const frames = [];
    for (;;) {
      const frame = await this.next();
      frames.push(frame);
      if (['response.completed', 'response.incomplete', 'response.failed', 'error'].includes(frame.type)) return frames;
    }
  }

  async closedWith(): Promise<{ code: number; reason: string }> {
    while (!this.closed) await new Promise<void>((resolve) => (this.wake = resolve));
    return this.closed;
  }
}

const socketURL = () => `${harness.gateway.url.replace(/^http/, 'ws')}/v1/responses`;

async function connect(key = harness.key, headers: Record<string, string> = {}): Promise<Client> {
  const ws = new WebSocket(socketURL(), {
    headers: { authorization: `Bearer ${key}`, 'openai-beta': 'responses_websockets=2026-02-06', ...headers },
  });
  const client = new Client(ws);
  await once(ws, 'open');
  return client;
}

async function receiptWhenWritten(id: string) {
  for (let tries = 0; tries < 200; tries++) {
    const response = await harness.get(`/v1/receipts/${id}`);
    if (response.status === 200) return response.json() as Promise<any>;
    await sleep(20);
  }
  throw new Error(`receipt ${id} never appeared`);
}

const receiptIdOf = (responseId: string) => `rcpt_${responseId.slice('resp_'.length)}`;

async function balance(): Promise<string> {
  const body = (await (await harness.get('/v1/balance')).json()) as any;
  return JSON.stringify(body);
}

async function receiptCount(): Promise<number> {
  return ((await (await harness.get('/v1/receipts?limit=100')).json()) as any).data.length;
}

const developer = { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are a coding agent.' }] };
const user = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
const shellTool = {
  type: 'function',
  name: 'shell',
  description: 'Runs a command',
  strict: false,
  parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
};

describe('the handshake', () => {
  test('takes the key from Authorization as HTTP does and offers permessage-deflate', async () => {
    const client = await connect();
    assert.match(client.ws.extensions, /permessage-deflate/);
    client.ws.close();
  });

  test('refuses an unknown key with the envelope and its status, before any upgrade', async () => {
    const ws = new WebSocket(socketURL(), { headers: { authorization: 'Bearer svc_nope_nope' } });
    ws.on('error', () => {});
    const [, response] = (await once(ws, 'unexpected-response')) as [unknown, import('node:http').IncomingMessage];
    assert.equal(response.statusCode, 401);
    let text = '';
    for await (const chunk of response) text += chunk;
    const body = JSON.parse(text);
    assert.equal(body.error.code, 'invalid_api_key');
    assert.match(body.error.request_id, /^req_/);
    ws.terminate();
  });

  test('a key without the inference scope is refused with insufficient_scope', async () => {
    const { key } = await harness.createKey({ scopes: ['fix'] });
    const ws = new WebSocket(socketURL(), { headers: { authorization: `Bearer ${key}` } });
    ws.on('error', () => {});
    const [, response] = (await once(ws, 'unexpected-response')) as [unknown, import('node:http').IncomingMessage];
    assert.equal(response.statusCode, 403);
    ws.terminate();
  });
});

describe('response.create frames', () => {
  test('a generate: false prewarm is answered created and completed with no provider call, no receipt and no charge', async () => {
    const before = [await balance(), await receiptCount()];
    const client = await connect();
    client.send({ type: 'response.create', model: 'up/alpha', input: [developer], tools: [shellTool], stream: true, store: false, generate: false });
    const frames = await client.answer();
    assert.deepEqual(
      frames.map((frame) => frame.type),
      ['response.created', 'response.in_progress', 'response.completed'],
    );
    const completed = frames.at(-1).response;
    assert.equal(completed.status, 'completed');
    assert.deepEqual(completed.output, []);
    assert.equal(completed.usage.total_tokens, 0);
    assert.match(completed.id, /^resp_/);
    // For the models its catalog knows, Codex prewarms with no input at all.
    client.send({ type: 'response.create', model: 'up/alpha', input: [], stream: true, store: false, generate: false });
    assert.equal((await client.answer()).at(-1).type, 'response.completed');
    assert.equal(harness.fake.requests.length, 0, 'no provider was called');
    assert.deepEqual([await balance(), await receiptCount()], before, 'nothing charged, no receipt');
    client.ws.close();
  });

  test('turns naming the previous response with only their new items reach the model as the whole conversation; each has its receipt', async () => {
    harness.fake.script(
      'alpha',
      { toolCalls: [{ id: 'call_ls', name: 'shell', arguments: '{"command":"ls"}' }], usage: { prompt: 50, completion: 10 } },
      { text: 'There are two files.', usage: { prompt: 80, completion: 6 } },
    );
    const client = await connect();
    const common = { type: 'response.create', model: 'up/alpha', tools: [shellTool], stream: true, store: false };
    client.send({ ...common, input: [developer], generate: false });
    const prewarm = (await client.answer()).at(-1).response.id;

    client.send({ ...common, previous_response_id: prewarm, input: [user('What is here?')] });
    const first = await client.answer();
    const firstResponse = first.at(-1).response;
    assert.equal(first.at(-1).type, 'response.completed');
    const call = firstResponse.output.find((item: any) => item.type === 'function_call');
    assert.equal(call.call_id, 'call_ls');
    assert.equal(call.name, 'shell');

    // After the tool ran: only its output, as Codex sends it.
    client.send({
      ...common,
      previous_response_id: firstResponse.id,
      input: [{ type: 'function_call_output', call_id: 'call_ls', output: 'a.txt\nb.txt' }],
    });
    const second = await client.answer();
    assert.equal(second.at(-1).type, 'response.completed');
    assert.equal(
      second
        .filter((frame) => frame.type === 'response.output_text.delta')
        .map((frame) => frame.delta)
        .join(''),
      'There are two files.',
    );

    const [firstCall, secondCall] = harness.fake.requests.map((request) => request.body as any);
    assert.deepEqual(
      firstCall.messages.map((message: any) => message.role),
      ['developer', 'user'],
    );
    assert.deepEqual(
      secondCall.messages.map((message: any) => message.role),
      ['developer', 'user', 'assistant', 'tool'],
    );
    assert.equal(secondCall.messages[2].tool_calls[0].id, 'call_ls');
    assert.deepEqual(secondCall.messages[3], { role: 'tool', tool_call_id: 'call_ls', content: 'a.txt\nb.txt' });

    const receipts = await Promise.all([firstResponse.id, second.at(-1).response.id].map((id) => receiptWhenWritten(receiptIdOf(id))));
    assert.notEqual(receipts[0].request_id, receipts[1].request_id, 'each turn is its own request');
    for (const receipt of receipts) {
      assert.equal(receipt.status, 'succeeded');
      assert.equal(receipt.endpoint, 'responses');
      assert.equal(receipt.stream, true);
      assert.equal(receipt.model, 'up/alpha');
    }
    assert.deepEqual(
      receipts.map((receipt) => receipt.usage.prompt_tokens),
      [50, 80],
    );
    client.ws.close();
  });

  test('each event frame holds exactly the data of the event POST /v1/responses streams for the same request', async () => {
    const body = { model: 'up/alpha', input: [developer, user('Say hi')], stream: true, store: false };
    harness.fake.script('alpha', { text: 'Hi there, friend.', usage: { prompt: 20, completion: 5 } });
    const http = await harness.post('/v1/responses', body);
    const overHttp = (await http.text())
      .split('\n\n')
      .filter((event) => event !== '')
      .map((event) => JSON.parse(/^data: (.*)$/m.exec(event)![1]!));

    harness.fake.script('alpha', { text: 'Hi there, friend.', usage: { prompt: 20, completion: 5 } });
    const client = await connect();
    client.send({ type: 'response.create', ...body });
    const overSocket = await client.answer();
    client.ws.close();

    // Ids and times are the request's own; everything else is the same.
    const sameness = (events: any[]) =>
      JSON.parse(
        JSON.stringify(events)
          .replace(/(resp|msg|rs|fc)_[A-Za-z0-9]+/g, '$1_ID')
          .replace(/"created_at":\d+/g, '"created_at":0'),
      );
    assert.deepEqual(sameness(overSocket), sameness(overHttp));
  });

  test('an alias whose first candidate is Anthropic-kind answers over the socket through the translation path, tool call included', async () => {
    harness.fake.script(
      'claude-x',
      { toolCalls: [{ id: 'toolu_1', name: 'shell', arguments: '{"command":"pwd"}' }], usage: { prompt: 40, completion: 8 } },
      { text: 'You are in /work.', usage: { prompt: 60, completion: 5 } },
    );
    const client = await connect();
    const common = { type: 'response.create', model: 'svc/balanced', tools: [shellTool], stream: true, store: false };
    client.send({ ...common, input: [developer, user('Where am I?')] });
    const first = (await client.answer()).at(-1).response;
    assert.equal(first.model, 'anth/claude');
    const call = first.output.find((item: any) => item.type === 'function_call');
    client.send({ ...common, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '/work' }] });
    const second = await client.answer();
    assert.equal(second.at(-1).type, 'response.completed');
    assert.equal(second.at(-1).response.output.at(-1).content[0].text, 'You are in /work.');
    const [, sent] = harness.fake.requests;
    assert.equal(sent!.path, '/v1/messages');
    const messages = (sent!.body as any).messages;
    assert.deepEqual(
      messages.map((message: any) => message.role),
      ['user', 'assistant', 'user'],
    );
    assert.equal(messages[1].content.at(-1).type, 'tool_use');
    assert.equal(messages[2].content[0].type, 'tool_result');
    const receipt = await receiptWhenWritten(receiptIdOf(second.at(-1).response.id));
    assert.equal(receipt.model, 'anth/claude');
    assert.equal(receipt.status, 'succeeded');
    client.ws.close();
  });

  test('a socket closed mid-turn stops the provider; the receipt says cancelled and bills what was generated', async () => {
    harness.fake.script('alpha', { text: 'word '.repeat(200), chunkSize: 5, chunkDelayMs: 20 });
    const client = await connect();
    client.send({ type: 'response.create', model: 'up/alpha', input: [user('long story')], stream: true, store: false });
    const created = await client.next();
    assert.equal(created.type, 'response.created');
    let deltas = 0;
    while (deltas < 5) if ((await client.next()).type === 'response.output_text.delta') deltas++;
    client.ws.close();
    await harness.fake.waitForAborted(1, 3_000);
    let receipt = await receiptWhenWritten(receiptIdOf(created.response.id));
    for (let tries = 0; receipt.status !== 'cancelled' && tries < 100; tries++) {
      await sleep(20);
      receipt = await receiptWhenWritten(receiptIdOf(created.response.id));
    }
    assert.equal(receipt.status, 'cancelled');
    assert.equal(receipt.error_code, 'request_cancelled');
    assert.ok(receipt.usage.completion_tokens > 0, 'what was forwarded is counted');
    assert.ok(receipt.usage.completion_tokens < 200, 'not the whole answer');
    assert.notEqual(receipt.cost, '0.000000000');
  });
});

describe('bad frames', () => {
  test('get the error envelope in an error frame, and the socket still answers the next turn', async () => {
    const client = await connect();
    client.send('{not json');
    const notJson = await client.next();
    assert.equal(notJson.type, 'error');
    assert.equal(notJson.status, 400);
    assert.equal(notJson.error.code, 'invalid_request');
    assert.match(notJson.error.request_id, /^req_/);
    assert.equal(notJson.error.retryable, false);

    client.send({ type: 'session.update', model: 'up/alpha' });
    const wrongType = await client.next();
    assert.equal(wrongType.error.code, 'invalid_request');
    assert.equal(wrongType.error.param, 'type');

    client.send({ type: 'response.create', model: 'up/alpha', input: [user('hi')], previous_response_id: 'resp_unknown' });
    const unknownPrevious = await client.answer();
    assert.equal(unknownPrevious.at(-1).type, 'error');
    assert.equal(unknownPrevious.at(-1).error.param, 'previous_response_id');

    // A body the HTTP route would refuse: refused the same way, with its receipt.
    client.send({ type: 'response.create', model: 'no/such-model', input: [user('hi')] });
    const unknownModel = (await client.answer()).at(-1);
    assert.equal(unknownModel.type, 'error');
    assert.equal(unknownModel.error.code, 'unsupported_model');
    const refused = await receiptWhenWritten(`rcpt_${unknownModel.error.request_id.slice('req_'.length)}`);
    assert.equal(refused.status, 'failed');
    assert.equal(refused.cost, '0.000000000');

    client.send({ type: 'response.create', model: 'up/alpha', input: [user('still there?')] });
    const answer = await client.answer();
    assert.equal(answer.at(-1).type, 'response.completed');
    assert.equal(harness.fake.requests.length, 1, 'only the good frame reached the provider');
    client.ws.close();
  });

  test('each turn counts against the key’s rate limit; over it, the error frame carries retry-after and a receipt, and the prewarm is not counted', async () => {
    const { key } = await issueApiKey(harness.gateway.deps.store, { name: 'one-a-minute', scopes: ['inference'], rateLimitPerMinute: 1 });
    const client = await connect(key);
    client.send({ type: 'response.create', model: 'up/alpha', input: [], generate: false });
    assert.equal((await client.answer()).at(-1).type, 'response.completed');
    client.send({ type: 'response.create', model: 'up/alpha', input: [user('one')] });
    assert.equal((await client.answer()).at(-1).type, 'response.completed');
    client.send({ type: 'response.create', model: 'up/alpha', input: [user('two')] });
    const limited = (await client.answer()).at(-1);
    assert.equal(limited.type, 'error');
    assert.equal(limited.status, 429);
    assert.equal(limited.error.code, 'rate_limit_exceeded');
    assert.equal(limited.error.retryable, true);
    assert.match(limited.headers['retry-after'], /^\d+$/);
    const receipt = await receiptWhenWritten(`rcpt_${limited.error.request_id.slice('req_'.length)}`);
    assert.equal(receipt.error_code, 'rate_limit_exceeded');
    assert.equal(harness.fake.requests.length, 1);
    client.ws.close();
  });

  test('a binary frame closes the socket with 1003', async () => {
    const client = await connect();
    client.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    const closed = await client.closedWith();
    assert.equal(closed.code, 1003);
  });

  test('the socket of a key revoked since the upgrade refuses its next turn', async () => {
    const { key, record } = await harness.createKey({ name: 'revoked-later' });
    const client = await connect(key);
    await harness.gateway.deps.store.revokeKey(record.accountId, record.id, new Date().toISOString(), 'console');
    client.send({ type: 'response.create', model: 'up/alpha', input: [user('hi')] });
    const refused = (await client.answer()).at(-1);
    assert.equal(refused.type, 'error');
    assert.equal(refused.error.code, 'key_revoked');
    assert.equal(harness.fake.requests.length, 0);
    client.ws.close();
  });
});

describe("Codex's own headers", () => {
  const codex = { 'x-codex-window-id': 'thread-1:0', 'session-id': 'thread-1', originator: 'codex_exec', 'x-codex-turn-state': 'sticky-1' };

  test('reach an OpenAI-kind provider as sent, the turn metadata of each frame winning over the upgrade’s; never an Anthropic-kind one', async () => {
    const client = await connect(harness.key, { ...codex, 'x-codex-turn-metadata': '{"request_kind":"prewarm"}' });
    const turn = {
      type: 'response.create',
      input: [user('hi')],
      client_metadata: { 'x-codex-turn-metadata': '{"request_kind":"turn"}', session_id: 'thread-1' },
    };
    client.send({ ...turn, model: 'up/alpha' });
    await client.answer();
    client.send({ ...turn, model: 'anth/claude' });
    await client.answer();
    client.ws.close();

    const [openai, anthropic] = harness.fake.requests;
    for (const [name, value] of Object.entries(codex)) assert.equal(openai!.headers[name], value, name);
    assert.equal(openai!.headers['x-codex-turn-metadata'], '{"request_kind":"turn"}');
    assert.equal(openai!.headers['openai-beta'], undefined, 'the socket transport is the gateway’s own');
    assert.equal(openai!.headers.authorization, 'Bearer sk-upstream-openai-SECRET', 'the provider key, never the client’s');
    assert.equal(anthropic!.path, '/v1/messages');
    for (const name of Object.keys(codex)) assert.equal(anthropic!.headers[name], undefined, name);
  });

  test('sent over HTTP to POST /v1/responses reach an OpenAI-kind provider too', async () => {
    const response = await harness.post('/v1/responses', { model: 'up/alpha', input: 'hi' }, harness.key, codex);
    assert.equal(response.status, 200);
    assert.equal(harness.fake.requests[0]!.headers['x-codex-turn-state'], 'sticky-1');
  });
});

describe('a gateway shutting down', () => {
  test('lets the turn in flight finish and get its receipt, then closes the socket with 1001; an idle socket closes at once', async () => {
    const own = await startHarness({ timeoutMs: 5_000, drainMs: 10_000 });
    try {
      own.fake.script('alpha', { text: 'word '.repeat(40), chunkSize: 5, chunkDelayMs: 20 });
      const open = async () => {
        const ws = new WebSocket(`${own.gateway.url.replace(/^http/, 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${own.key}` } });
        const client = new Client(ws);
        await once(ws, 'open');
        return client;
      };
      const [busy, idle] = [await open(), await open()];
      busy.send({ type: 'response.create', model: 'up/alpha', input: [user('long story')] });
      const created = await busy.next();
      while ((await busy.next()).type !== 'response.output_text.delta');
      const closing = own.gateway.close();
      assert.equal((await idle.closedWith()).code, 1001);
      const rest = await busy.answer();
      assert.equal(rest.at(-1).type, 'response.completed');
      assert.equal(rest.at(-1).response.output[0].content[0].text, 'word '.repeat(40));
      assert.equal((await busy.closedWith()).code, 1001);
      await closing;
      const store = createSqliteStore(own.gateway.deps.config.database.path);
      const receipt = await store.getReceipt(DEFAULT_ACCOUNT_ID, receiptIdOf(created.response.id));
      await store.close();
      assert.equal(receipt?.status, 'succeeded');
    } finally {
      await own.close();
    }
  });
});
