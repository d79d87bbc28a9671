import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { harnessConfigText, startHarness, type Harness } from './helpers/gateway-harness.ts';

/**
 * The real Codex binary (the devDependency's) on its built-in OpenAI provider, pointed at the
 * gateway with `openai_base_url` and nothing else: it opens the Responses WebSocket, prewarms,
 * then runs a turn with a tool round trip, on an OpenAI-kind and on an Anthropic-kind model.
 * A proxy in front of the gateway lists every request Codex made, to show it never fell back
 * to HTTP.
 */
const bin = resolve('node_modules/.bin');
const directory = mkdtempSync(join(tmpdir(), 'codex-socket-'));
let harness: Harness;
let proxy: RecordingProxy;

before(async () => {
  harness = await startHarness({ timeoutMs: 10_000 });
  proxy = await startRecordingProxy(new URL(harness.gateway.url).port);
});
after(async () => {
  await proxy?.close();
  await harness?.close();
  rmSync(directory, { recursive: true, force: true });
});
beforeEach(() => {
  harness.fake.reset();
  proxy.seen.length = 0;
});

interface RecordingProxy {
  url: string;
  /** `METHOD /path` of every HTTP request, `UPGRADE /path` of every WebSocket upgrade. */
  seen: string[];
  /** The headers of each upgrade. */
  upgrades: IncomingMessage['headers'][];
  close(): Promise<void>;
}

/** Passes HTTP requests and WebSocket upgrades on to the gateway as they are, noting each. */
async function startRecordingProxy(port: string): Promise<RecordingProxy> {
  const seen: string[] = [];
  const upgrades: IncomingMessage['headers'][] = [];
  const tunnels = new Set<Duplex>();
  const server: Server = createServer((incoming, outgoing) => {
    seen.push(`${incoming.method} ${incoming.url}`);
    const forward = httpRequest({ host: '127.0.0.1', port, path: incoming.url, method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(outgoing);
    });
    forward.on('error', () => outgoing.destroy());
    incoming.pipe(forward);
  });
  server.on('upgrade', (incoming: IncomingMessage, socket: Duplex, head: Buffer) => {
    seen.push(`UPGRADE ${incoming.url}`);
    upgrades.push(incoming.headers);
    const upstream = connect(Number(port), '127.0.0.1');
    let lines = `${incoming.method} ${incoming.url} HTTP/1.1\r\n`;
    for (let index = 0; index < incoming.rawHeaders.length; index += 2)
      lines += `${incoming.rawHeaders[index]}: ${incoming.rawHeaders[index + 1]}\r\n`;
    upstream.write(`${lines}\r\n`);
    upstream.write(head);
    socket.pipe(upstream).pipe(socket);
    for (const end of [socket, upstream]) {
      tunnels.add(end);
      end.on('error', () => {
        socket.destroy();
        upstream.destroy();
      });
      end.on('close', () => tunnels.delete(end));
    }
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    upgrades,
    close: () => {
      for (const end of tunnels) end.destroy();
      server.closeAllConnections();
      return new Promise((done) => server.close(() => done()));
    },
  };
}

/** Runs `codex exec` in a fresh home whose config names only the gateway's address and the model. */
function runCodex(name: string, model: string, prompt: string, extraConfig: string[] = []): Promise<{ stdout: string; stderr: string }> {
  const home = join(directory, name);
  const codexHome = join(home, 'codex');
  const work = join(home, 'work');
  mkdirSync(codexHome, { recursive: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(
    join(codexHome, 'config.toml'),
    [`openai_base_url = "${proxy.url}/v1"`, `model = "${model}"`, 'approval_policy = "never"', ...extraConfig, ''].join('\n'),
  );
  const env = { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, HOME: home, LANG: 'C.UTF-8', CODEX_HOME: codexHome, CODEX_API_KEY: harness.key };
  const args = ['exec', '--skip-git-repo-check', '--sandbox', 'danger-full-access', prompt];
  return new Promise((done, fail) => {
    const child = spawn(join(bin, 'codex'), args, { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', fail);
    child.once('close', (code, signal) => {
      if (code === 0) done({ stdout, stderr });
      else fail(new Error(`codex exited with ${code ?? signal}\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

/** The tool call Codex gets first, the answer it gets once it sent the command's output back. */
function scriptToolRoundTrip(upstream: string, callId: string): void {
  harness.fake.script(
    upstream,
    {
      toolCalls: [{ id: callId, name: 'exec_command', arguments: JSON.stringify({ cmd: 'echo socket-$((40+2))' }) }],
      usage: { prompt: 900, completion: 20 },
    },
    { text: 'The command printed socket-42.', usage: { prompt: 1000, completion: 8 } },
  );
}

function assertToolRoundTrip(callId: string, stdout: string): void {
  assert.match(stdout, /The command printed socket-42\./);
  const calls = harness.fake.requests;
  assert.equal(calls.length, 2, 'the prewarm called no provider: one call for the tool, one for the answer');
  const second = JSON.stringify(calls[1]!.body);
  assert.match(second, new RegExp(callId), 'the second call carries the tool call and its result');
  assert.match(second, /socket-42/, 'the command really ran: its output reached the model');
  assert.match(second, /Say what echo prints/, "the conversation resolved from previous_response_id holds the user's prompt");
}

function assertNoHttpFallback(): void {
  assert.ok(proxy.seen.includes('UPGRADE /v1/responses'), `Codex opened the socket: ${proxy.seen.join(', ')}`);
  assert.deepEqual(
    proxy.seen.filter((line) => line.startsWith('POST')),
    [],
    'no POST /v1/responses: Codex never fell back to HTTP',
  );
}

describe('the real Codex binary on its built-in provider', () => {
  test('runs a tool round trip over the WebSocket on an OpenAI-kind model', async () => {
    scriptToolRoundTrip('alpha', 'call_sock1');
    const { stdout } = await runCodex('openai-kind', 'up/alpha', 'Say what echo prints: run `echo socket-$((40+2))`.');
    assertToolRoundTrip('call_sock1', stdout);
    assert.equal(harness.fake.requests[0]!.path, '/v1/chat/completions');
    assertNoHttpFallback();
    const upgrade = proxy.upgrades.at(-1)!;
    assert.match(String(upgrade['openai-beta']), /responses_websockets=/);
    assert.match(String(upgrade['sec-websocket-extensions']), /permessage-deflate/);

    const { data } = (await (await harness.get('/v1/receipts?limit=10')).json()) as { data: any[] };
    const turns = data.filter((receipt) => receipt.requested_model === 'up/alpha').slice(0, 2);
    assert.equal(turns.length, 2, 'two turns, two receipts (the prewarm has none)');
    assert.ok(turns.every((receipt) => receipt.status === 'succeeded' && receipt.endpoint === 'responses'));
    assert.deepEqual(turns.map((receipt) => receipt.usage.prompt_tokens).sort(), [1000, 900]);
  });

  test('runs a tool round trip over the WebSocket on an alias whose model is Anthropic-kind', async () => {
    scriptToolRoundTrip('claude-x', 'toolu_sock2');
    const { stdout } = await runCodex('anthropic-kind', 'svc/balanced', 'Say what echo prints: run `echo socket-$((40+2))`.');
    assertToolRoundTrip('toolu_sock2', stdout);
    assert.deepEqual(
      harness.fake.requests.map((request) => request.path),
      ['/v1/messages', '/v1/messages'],
    );
    assertNoHttpFallback();
  });

  test('compacts its context through the gateway when it fills: the note any model wrote carries the conversation on', async () => {
    harness.fake.script(
      'alpha',
      // A prompt this large is past the compaction limit set below: Codex compacts before going on.
      {
        toolCalls: [{ id: 'call_big', name: 'exec_command', arguments: JSON.stringify({ cmd: 'echo socket-$((40+2))' }) }],
        usage: { prompt: 190_000, completion: 20 },
      },
      { text: 'NOTE: the user wants to know what echo printed; it printed socket-42.', usage: { prompt: 190_100, completion: 30 } },
      { text: 'The command printed socket-42.', usage: { prompt: 600, completion: 8 } },
    );
    const { stdout, stderr } = await runCodex('compaction', 'up/alpha', 'Say what echo prints: run `echo socket-$((40+2))`.', [
      'model_auto_compact_token_limit = 5000',
    ]);
    assert.match(stdout, /The command printed socket-42\./);
    assert.doesNotMatch(stdout + stderr, /compact task/i);
    const [, compaction, after] = harness.fake.requests.map((request) => JSON.stringify(request.body));
    assert.match(compaction!, /handoff note/, 'the compaction asked the model for a note');
    assert.match(after!, /compacted into this note:.*NOTE: the user wants to know what echo printed/, 'the turn after it reads the note');
    assert.doesNotMatch(after!, /call_big/, 'and not the compacted turns');
    assertNoHttpFallback();
  });

  test('runs on what setup codex --built-in --write put in CODEX_HOME: no key in the environment, no metadata warning', async () => {
    const configPath = join(directory, 'gateway.yaml');
    writeFileSync(configPath, harnessConfigText(harness.fake.url, harness.gateway.deps.config.database.path));
    const home = join(directory, 'set-up');
    const codexHome = join(home, 'codex');
    const work = join(home, 'work');
    mkdirSync(work, { recursive: true });
    const env = { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`, HOME: home, LANG: 'C.UTF-8', CODEX_HOME: codexHome };
    const { stdout: printed } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/main.ts',
        'setup',
        'codex',
        '--built-in',
        '--write',
        '--json',
        '--model',
        'up/alpha',
        '--url',
        proxy.url,
        '--config',
        configPath,
      ],
      { env: { ...env, NODE_OPTIONS: '' } },
    );
    const setup = JSON.parse(printed);
    assert.equal(setup.provider, 'built-in');
    assert.equal(setup.written.catalog, join(codexHome, 'model-gateway-models.json'), setup.written.catalogProblem);

    harness.fake.script('alpha', { text: 'Set up and answering.', usage: { prompt: 300, completion: 4 } });
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((done, fail) => {
      const child = spawn(join(bin, 'codex'), ['exec', '--skip-git-repo-check', 'Say hello'], {
        cwd: work,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 120_000,
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      child.stderr.on('data', (chunk) => (err += chunk));
      child.once('error', fail);
      child.once('close', (code) => (code === 0 ? done({ stdout: out, stderr: err }) : fail(new Error(`codex exited with ${code}\n${out}\n${err}`))));
    });
    assert.match(stdout, /Set up and answering\./);
    assert.doesNotMatch(stderr, /Model metadata/);
    assertNoHttpFallback();
    const { data } = (await (await harness.get('/v1/receipts?limit=5')).json()) as { data: any[] };
    assert.equal(data[0].key.id, setup.key_id, 'the turn was made with the key the setup minted');
  });
});
