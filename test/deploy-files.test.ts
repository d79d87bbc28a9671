import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { issueApiKey } from '../src/auth/issue-api-key.ts';
import { usageText } from '../src/cli/usage.ts';
import { parseConfig } from '../src/config/load-config.ts';
import { harnessConfigText, startHarness, type Harness } from './helpers/gateway-harness.ts';

/** What deploy/ holds is checked against what the gateway really serves and the files it really has. */

const dashboard = JSON.parse(readFileSync('deploy/grafana-dashboard.json', 'utf8')) as {
  panels: { targets?: { expr: string; legendFormat?: string }[] }[];
};
const alerts = parseYaml(readFileSync('deploy/prometheus-alerts.yml', 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };

/** Every PromQL expression of the dashboard and the alert rules, with where it comes from. */
const expressions: { where: string; expr: string; legend?: string }[] = [
  ...dashboard.panels.flatMap((panel: any) =>
    (panel.targets ?? []).map((target: any) => ({ where: `dashboard "${panel.title}"`, expr: target.expr, legend: target.legendFormat })),
  ),
  ...alerts.groups.flatMap((group) => group.rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr }))),
];

/** Labels Prometheus adds to every series it scrapes (the gateway never serves them), and the bucket bound. */
const TARGET_LABELS = new Set(['instance', 'job', 'le']);
/** Series Prometheus makes itself. */
const PROMETHEUS_SERIES = new Set(['up']);

/** Each sample's family (histogram suffixes folded) and its label names, from the text format. */
function servedSeries(text: string): Map<string, Set<string>> {
  const families = new Map<string, Set<string>>();
  const histograms = new Set(
    text
      .split('\n')
      .filter((line) => line.startsWith('# TYPE ') && line.endsWith(' histogram'))
      .map((line) => line.split(' ')[2]!),
  );
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? /.exec(line);
    assert.ok(match, `a sample line: ${line}`);
    const labels = [...(match[2] ?? '').matchAll(/(\w+)="(?:[^"\\]|\\.)*"/g)].map((label) => label[1]!);
    for (const name of [match[1]!, match[1]!.replace(/_(bucket|sum|count)$/, '')]) {
      if (name !== match[1] && !histograms.has(name)) continue;
      const seen = families.get(name) ?? new Set<string>();
      for (const label of labels) seen.add(label);
      families.set(name, seen);
    }
  }
  return families;
}

/** The metric names an expression reads, each with the label names its selector matches on. */
function selectors(expr: string): { name: string; labels: string[] }[] {
  const found: { name: string; labels: string[] }[] = [];
  // Label names inside by/on/without/group_left/ignoring lists are not metrics.
  const withoutGroupings = expr.replace(/\b(by|on|without|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const withoutStrings = withoutGroupings.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  for (const match of withoutStrings.matchAll(/\b([a-zA-Z_:][\w:]*)\s*(\{[^}]*\})?/g)) {
    const name = match[1]!;
    if (!(name.startsWith('gateway_') || PROMETHEUS_SERIES.has(name))) continue;
    const labels = [...(match[2] ?? '').matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g)].map((label) => label[1]!);
    found.push({ name, labels });
  }
  return found;
}

/** Label names an expression groups or joins by, and the ones a legend prints. */
function groupingLabels(expr: string, legend = ''): string[] {
  const lists = [...expr.matchAll(/\b(?:by|on|without|ignoring)\s*\(([^)]*)\)/g)].map((match) => match[1]!);
  const names = lists.flatMap((list) => list.split(',').map((name) => name.trim())).filter(Boolean);
  return [...names, ...[...legend.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((match) => match[1]!)];
}

describe('the Grafana dashboard and the Prometheus alerts read only what /metrics serves', () => {
  let harness: Harness;
  let served: Map<string, Set<string>>;

  before(async () => {
    harness = await startHarness();
    const { fake } = harness;
    // A few requests of each kind: answered, a fallback, failed, streamed, rate-limited, on both formats.
    fake.script('alpha', { text: 'one' }, { status: 500 });
    fake.script('beta', { text: 'two', usage: { prompt: 50, completion: 3, cached: 10 } });
    const chat = (model: string, extra: Record<string, unknown> = {}, key?: string) =>
      harness.post('/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }], ...extra }, key).then((response) => response.text());
    await chat('up/alpha');
    await chat('svc/fast');
    await chat('up/beta', { stream: true });
    await chat('no-such-model');
    await harness.post('/v1/messages', { model: 'anth/claude', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }).then((r) => r.text());
    const limited = await issueApiKey(harness.gateway.deps.store, { name: 'limited', scopes: ['inference'], rateLimitPerMinute: 1 });
    await chat('up/beta', {}, limited.key);
    await chat('up/beta', {}, limited.key);
    served = servedSeries(await (await fetch(`${harness.gateway.url}/metrics`)).text());
  });
  after(() => harness.close());

  test('there is something to check', () => {
    assert.ok(dashboard.panels.filter((panel: any) => panel.targets).length >= 15, 'dashboard panels');
    assert.ok(alerts.groups[0]!.rules.length >= 8, 'alert rules');
  });

  for (const { where, expr, legend } of expressions) {
    test(`${where}: ${expr.replace(/\s+/g, ' ').slice(0, 110)}`, () => {
      const read = selectors(expr);
      assert.ok(read.length > 0, 'it reads a gateway metric');
      const labelsOfExpression = new Set<string>();
      for (const { name, labels } of read) {
        if (PROMETHEUS_SERIES.has(name)) continue;
        const family = served.get(name);
        assert.ok(family, `${name} is served by /metrics`);
        for (const label of family) labelsOfExpression.add(label);
        for (const label of labels) {
          if (TARGET_LABELS.has(label)) continue;
          assert.ok(family.has(label), `${name} has a label ${label} (it has ${[...family].join(', ') || 'none'})`);
        }
      }
      for (const label of groupingLabels(expr, legend)) {
        if (TARGET_LABELS.has(label)) continue;
        assert.ok(labelsOfExpression.has(label), `a metric of the expression has the label ${label} it groups or prints by`);
      }
      // Balanced, at least: a typo in a bracket fails here rather than in Prometheus.
      for (const [open, close] of [
        ['(', ')'],
        ['[', ']'],
        ['{', '}'],
      ] as const)
        assert.equal(expr.split(open).length, expr.split(close).length, `${open}${close} balanced`);
    });
  }
});

/** The commands the CLI knows, from its usage text. */
const COMMANDS = new Set([...usageText.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((match) => match[1]!));

describe('deploy/Dockerfile: builds from what it copies and runs what it names', () => {
  const lines = readFileSync('deploy/Dockerfile', 'utf8')
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'));
  const instruction = (name: string) => lines.filter((line) => line.startsWith(`${name} `)).map((line) => line.slice(name.length + 1).trim());
  let directory: string;
  before(async () => {
    directory = await mkdtemp(join(tmpdir(), 'gateway-image-'));
  });
  after(() => rm(directory, { recursive: true, force: true }));

  test('node:20-slim; every COPY source is in the repository; npm ci; the CMD is bin/gateway.js start; the ports are the defaults', () => {
    assert.deepEqual(instruction('FROM'), ['node:20-slim']);
    const copies = instruction('COPY').map((line) => line.split(/\s+/));
    assert.ok(copies.length > 0);
    for (const parts of copies) for (const source of parts.slice(0, -1)) assert.ok(existsSync(source), `COPY ${source}: in the repository`);
    assert.ok(
      instruction('RUN').some((line) => /\bnpm ci\b/.test(line)),
      'installed with npm ci',
    );
    const command = JSON.parse(instruction('CMD')[0]!) as string[];
    assert.deepEqual(command.slice(0, 3), ['node', 'bin/gateway.js', 'start']);
    assert.ok(COMMANDS.has('start'));
    assert.equal(command[3], '--config');
    const config = parseConfig(harnessConfigText('http://127.0.0.1:1', 'x.db').replace('server: { host: 127.0.0.1, port: 0 }', ''), 'defaults');
    assert.ok(instruction('EXPOSE')[0]!.split(/\s+/).includes(String(config.server.port)), 'the default port is exposed');
    assert.match(instruction('HEALTHCHECK')[0]!, /\/health/);
    const ignored = readFileSync('deploy/Dockerfile.dockerignore', 'utf8').split('\n');
    for (const entry of ['node_modules', 'dist', '.git', 'data']) assert.ok(ignored.includes(entry), `${entry} stays out of the build context`);
  });

  test('the files it copies build with the prepare script npm ci runs, and the build starts and answers /health', async () => {
    const copies = instruction('COPY').map((line) => line.split(/\s+/));
    for (const parts of copies) {
      const target = parts.at(-1)!;
      for (const source of parts.slice(0, -1)) cpSync(source, join(directory, target === './' ? source : target), { recursive: true });
    }
    // The dependencies npm ci would install: this checkout's own.
    symlinkSync(join(process.cwd(), 'node_modules'), join(directory, 'node_modules'), 'dir');
    const prepare = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts.prepare!;
    const built = spawnSync('sh', ['-c', prepare], { cwd: directory, encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    // The environment the image sets, with a port of the test's own.
    const env: Record<string, string> = {};
    for (const line of instruction('ENV')) for (const match of line.matchAll(/(\w+)=(\S+)/g)) env[match[1]!] = match[2]!;
    assert.equal(env.HOST, '0.0.0.0', 'listens beyond the container');
    const configPath = join(directory, 'gateway.yaml');
    writeFileSync(configPath, harnessConfigText('http://127.0.0.1:1', 'unused.db').replace('host: 127.0.0.1', 'host: 0.0.0.0'));
    const command = JSON.parse(instruction('CMD')[0]!) as string[];
    const child = spawn(command[0] === 'node' ? process.execPath : command[0]!, [...command.slice(1, 4), configPath], {
      cwd: directory,
      env: { ...process.env, ...env, PORT: '0', DATABASE_PATH: join(directory, 'gateway.db'), GATEWAY_CONFIG: configPath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let output = '';
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`did not start:\n${output}`)), 20_000);
        const look = (chunk: Buffer) => {
          output += String(chunk);
          const match = /gateway listening on http:\/\/[^:]+:(\d+)/.exec(output);
          if (match) {
            clearTimeout(timer);
            resolve(`http://127.0.0.1:${match[1]}`);
          }
        };
        child.stdout!.on('data', look);
        child.stderr!.on('data', look);
        child.once('exit', () => reject(new Error(`exited:\n${output}`)));
      });
      assert.equal((await fetch(`${url}/health`)).status, 200, 'the HEALTHCHECK path');
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('deploy/model-gateway.service: a unit systemd accepts, running a real command', () => {
  const text = readFileSync('deploy/model-gateway.service', 'utf8');
  const settings = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const match = /^(\w+)=(.*)$/.exec(line);
    if (match) settings.set(match[1]!, [...(settings.get(match[1]!) ?? []), match[2]!]);
  }
  const one = (name: string) => settings.get(name)?.[0] ?? '';

  test('ExecStart runs bin/gateway.js start with the config the environment names; the stop leaves time for the drain', () => {
    const [node, script, command, flag, configPath] = one('ExecStart').split(/\s+/);
    assert.match(node!, /^\/.+\/node$/, 'node by an absolute path');
    const installRoot = '/opt/model-gateway/';
    assert.ok(script!.startsWith(installRoot));
    assert.ok(existsSync(script!.slice(installRoot.length)), `${script} is a file of the package`);
    assert.ok(COMMANDS.has(command!), `${command} is a gateway command`);
    assert.equal(flag, '--config');
    assert.ok(settings.get('Environment')!.includes(`GATEWAY_CONFIG=${configPath}`));
    assert.equal(one('KillSignal'), 'SIGTERM');
    const { server } = parseConfig(harnessConfigText('http://127.0.0.1:1', 'x.db'), 'defaults');
    // The drain, then settling, releasing holds and closing the clients, each with its deadline.
    assert.ok(Number(one('TimeoutStopSec')) * 1000 > server.drain_ms + 5 * server.close_timeout_ms, 'TimeoutStopSec covers a whole shutdown');
    // ProtectSystem=strict leaves only the state directory writable: the SQLite file's ./data must be in it.
    assert.equal(one('ProtectSystem'), 'strict');
    assert.equal(one('WorkingDirectory'), `/var/lib/${one('StateDirectory')}`);
  });

  test('systemd-analyze verify finds nothing to ignore', (context) => {
    const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
    if (probe.error) {
      context.skip('systemd-analyze is not installed');
      return;
    }
    const verified = spawnSync('systemd-analyze', ['verify', 'deploy/model-gateway.service'], { encoding: 'utf8' });
    const problems = `${verified.stdout}${verified.stderr}`
      .split('\n')
      // The unit names a user and paths of the host it is installed on, not of this one.
      .filter((line) => line.trim() !== '' && !/\/opt\/model-gateway|User|Group|not found|Failed to prepare/.test(line));
    assert.deepEqual(problems, []);
  });
});
