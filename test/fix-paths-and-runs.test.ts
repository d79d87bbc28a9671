import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseUsd } from '../src/lib/money.ts';
import { BROKEN_EDIT, FIX_INPUT, GOOD_EDIT, jsonOf as json, readEvents, withPatchedRepository } from './helpers/fix-fixtures.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

async function quote(harness: Harness, body: Record<string, unknown>) {
  const response = await harness.post('/v1/fix/quote', { agent: 'code-fix', tier: 'fast', ...FIX_INPUT, ...body });
  return { status: response.status, body: await json(response), headers: response.headers };
}

async function tierOf(harness: Harness, name: string) {
  const agents = await json(await harness.get('/v1/fix/agents'));
  return agents.data[0].tiers.find((tier: { tier: string }) => tier.tier === name);
}

/** A port on this host nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** `patch` applied with `git apply` in a fresh repository holding `files`: the files after it. */
async function gitApplied(files: Array<{ path: string; content: string }>, patch: string, paths: string[]): Promise<Map<string, string | null>> {
  return withPatchedRepository(files, patch, async (directory, command) => {
    await command('git', 'apply', 'fix.patch');
    const after = new Map<string, string | null>();
    for (const path of paths) after.set(path, await readFile(join(directory, path), 'utf8').catch(() => null));
    // patch(1) reads the same names.
    await command('git', 'apply', '-R', 'fix.patch');
    await command('patch', '-p1', '--batch', '--silent', '-i', 'fix.patch');
    return after;
  });
}

describe('fix agents: paths real projects have', () => {
  test('brackets, spaces and non-ASCII are accepted, edited, and the patch applies with git apply and patch -p1', async () => {
    const harness = await startHarness();
    try {
      const files = [
        { path: 'app/[slug]/page.tsx', content: 'export default function Page() {\n  return <h1>Helo</h1>;\n}\n' },
        { path: 'my file.js', content: 'export const greeting = "helo";\n' },
        { path: 'src/café.js', content: 'export const menu = ["tea", "cofee"];\n' },
      ];
      const edit = (path: string, search: string, replace: string) =>
        `${path}\n\`\`\`\n<<<<<<< SEARCH\n${search === '' ? '' : `${search}\n`}=======\n${replace}\n>>>>>>> REPLACE\n\`\`\`\n`;
      harness.fake.script('alpha', {
        text:
          'Three typos, and a new page.\n\n' +
          edit('app/[slug]/page.tsx', '  return <h1>Helo</h1>;', '  return <h1>Hello</h1>;') +
          edit('my file.js', 'export const greeting = "helo";', 'export const greeting = "hello";') +
          edit('src/café.js', 'export const menu = ["tea", "cofee"];', 'export const menu = ["tea", "coffee"];') +
          edit('app/[slug]/ünï.tsx', '', 'export const ok = true;'),
      });
      const priced = await quote(harness, { files, command: undefined, output: undefined, instruction: 'fix the typos' });
      assert.equal(priced.status, 200, JSON.stringify(priced.body));
      const view = await json(await harness.post('/v1/fix/runs', { quote: priced.body.id }));
      assert.equal(view.status, 'succeeded', JSON.stringify(view));
      assert.deepEqual([...view.files].sort(), ['app/[slug]/page.tsx', 'app/[slug]/ünï.tsx', 'my file.js', 'src/café.js']);
      // Named as git names them: non-ASCII quoted in octal, a tab after a name with a space.
      assert.ok(view.patch.includes('diff --git "a/src/caf\\303\\251.js" "b/src/caf\\303\\251.js"\n'), view.patch);
      assert.ok(view.patch.includes('--- a/my file.js\t\n+++ b/my file.js\t\n'), view.patch);
      assert.ok(view.patch.includes('diff --git a/app/[slug]/page.tsx b/app/[slug]/page.tsx\n'), view.patch);
      const after = await gitApplied(files, view.patch, [...files.map((file) => file.path), 'app/[slug]/ünï.tsx']);
      assert.deepEqual(Object.fromEntries(after), {
        'app/[slug]/page.tsx': 'export default function Page() {\n  return <h1>Hello</h1>;\n}\n',
        'my file.js': 'export const greeting = "hello";\n',
        'src/café.js': 'export const menu = ["tea", "coffee"];\n',
        'app/[slug]/ünï.tsx': 'export const ok = true;\n',
      });
    } finally {
      await harness.close();
    }
  });

  test('paths that are not safe are refused, naming the file and why', async () => {
    const harness = await startHarness();
    try {
      const cases: Array<[string, RegExp]> = [
        ['../etc/passwd', /leaves the repository/],
        ['/etc/passwd', /absolute/],
        ['C:/x.js', /absolute/],
        ['~/x.js', /absolute/],
        ['src\\x.js', /backslash/],
        ['a\u0000b.js', /control character/],
        ['a\tb.js', /control character/],
        ['a\u0085b.js', /control character/],
        ['cafe\u0301.js', /NFC/],
        ['.git/config', /\.git/],
        ['a//b.js', /empty or "\." segment/],
        ['./a.js', /empty or "\." segment/],
        ['x'.repeat(301), /longer than 300/],
      ];
      for (const [path, why] of cases) {
        const refused = await quote(harness, { files: [{ path, content: 'x\n' }] });
        assert.deepEqual([refused.status, refused.body.error.code, refused.body.error.param], [400, 'invalid_request', 'files[0].path'], path);
        assert.match(refused.body.error.message, why, path);
      }
      for (const path of ['app/(group)/[...all]/page.tsx', 'docs/é t é.md', 'say "hi".txt', 'a+b@c=d,e~f.js', '日本語/ファイル.ts']) {
        assert.equal((await quote(harness, { files: [{ path, content: 'x\n' }] })).status, 200, path);
      }
    } finally {
      await harness.close();
    }
  });
});

describe('fix runs: step costs, resuming', () => {
  test('a cancelled run: the cut call is charged on its step, and the steps add up to the cost of the run and its receipt', async () => {
    const harness = await startHarness();
    try {
      harness.fake.script('alpha', { text: BROKEN_EDIT }, { text: GOOD_EDIT, headerDelayMs: 2_000 });
      const priced = await quote(harness, {});
      const response = await harness.post('/v1/fix/runs', { quote: priced.body.id, stream: true });
      const runId = response.headers.get('x-svc-run-id')!;
      let started = 0;
      await readEvents(response, (event) => {
        if (event.event === 'step.started' && ++started === 3) void harness.post(`/v1/fix/runs/${runId}/cancel`, {});
      });
      const view = await json(await harness.get(`/v1/fix/runs/${runId}`));
      assert.equal(view.status, 'cancelled');
      const cut = view.steps.find((step: { index: number }) => step.index === 3);
      assert.deepEqual([cut.kind, cut.status], ['model', 'failed']);
      assert.ok(parseUsd(cut.cost) > 0, 'the cut call read its prompt');
      const stepsTotal = view.steps.reduce((sum: number, step: { cost: string }) => sum + parseUsd(step.cost), 0);
      assert.equal(stepsTotal, parseUsd(view.cost));
      const receipt = await json(await harness.get(`/v1/receipts/${view.receipt_id}`));
      assert.equal(parseUsd(receipt.cost), stepsTotal);
    } finally {
      await harness.close();
    }
  });

  test('resuming at or past the last event answers what exists: nothing after it, then the stream ends', async () => {
    const harness = await startHarness();
    try {
      harness.fake.script('alpha', { text: GOOD_EDIT });
      const priced = await quote(harness, {});
      const view = await json(await harness.post('/v1/fix/runs', { quote: priced.body.id }));
      const events = await readEvents(await harness.get(`/v1/fix/runs/${view.id}/events`));
      const last = Number(events.at(-1)!.id);
      assert.equal(events.at(-1)!.event, 'run.completed');
      const resumed = async (query: string, headers: Record<string, string> = {}) => {
        const response = await fetch(`${harness.gateway.url}/v1/fix/runs/${view.id}/events${query}`, {
          headers: { authorization: `Bearer ${harness.key}`, ...headers },
        });
        assert.equal(response.status, 200);
        return (await readEvents(response)).map((event) => [event.id, event.event]);
      };
      assert.deepEqual(await resumed(`?after=${last - 1}`), [[String(last), 'run.completed']]);
      assert.deepEqual(await resumed(`?after=${last}`), []);
      const started = Date.now();
      assert.deepEqual(await resumed('?after=99'), []);
      assert.deepEqual(await resumed('', { 'last-event-id': '99' }), []);
      assert.ok(Date.now() - started < 2_000, 'the stream ends at once');
    } finally {
      await harness.close();
    }
  });
});

describe('fix agents: which tiers are connected', () => {
  test('a key-less provider on this host counts as connected only while it answers', async () => {
    const port = await closedPort();
    const harness = await startHarness({
      editConfig: (text) => {
        const fakeUrl = /base_url: "([^"]+)\/v1", api_key/.exec(text)![1]!;
        return text
          .replace(
            'providers:\n',
            `providers:\n  - { id: dead, kind: openai, base_url: "http://127.0.0.1:${port}/v1" }\n  - { id: local, kind: openai, base_url: "${fakeUrl}/v1" }\n`,
          )
          .replace(
            'models:\n',
            'models:\n  - { id: dead/x, provider: dead, upstream: alpha, price: { input: "1", output: "2" }, context_window: 100000, max_output_tokens: 4096 }\n' +
              '  - { id: local/x, provider: local, upstream: alpha, price: { input: "1", output: "2" }, context_window: 100000, max_output_tokens: 4096 }\n',
          )
          .replace('svc/best: { candidates: [up/beta, anth/claude]', 'svc/best: { candidates: [dead/x]')
          .replace('svc/balanced: { candidates: [anth/claude, up/alpha]', 'svc/balanced: { candidates: [dead/x, local/x]');
      },
    });
    try {
      const best = await tierOf(harness, 'best');
      assert.deepEqual([best.connected, best.connected_models], [false, []]);
      const balanced = await tierOf(harness, 'balanced');
      assert.deepEqual([balanced.connected, balanced.connected_models], [true, ['local/x']]);
      const refused = await quote(harness, { tier: 'best' });
      assert.deepEqual([refused.status, refused.body.error.code], [503, 'provider_unavailable']);
      const receipt = await json(await harness.get(`/v1/receipts/${refused.headers.get('x-svc-receipt-id')}`));
      assert.deepEqual([receipt.status, receipt.error_code, receipt.cost], ['failed', 'provider_unavailable', '0.000000000']);
      const priced = await quote(harness, { tier: 'balanced' });
      assert.equal(priced.status, 200);
      // Priced on the model that answers only.
      assert.equal(priced.body.step_budget, 3);
    } finally {
      await harness.close();
    }
  });

  test('a tier stays connected until health.failures_to_cool (5 by default) failures in a row, as docs/api.md says', async () => {
    const harness = await startHarness();
    try {
      const down = Array.from({ length: 5 }, () => ({ status: 500 }));
      harness.fake.script('alpha', ...down);
      harness.fake.script('beta', ...down);
      const chat = () => harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] });
      for (let index = 0; index < 4; index++) assert.equal((await chat()).status, 503);
      assert.equal((await tierOf(harness, 'fast')).connected, true, 'four failures: still connected');
      assert.equal((await chat()).status, 503);
      assert.equal((await tierOf(harness, 'fast')).connected, false, 'the fifth cools it down');
      const docs = await readFile(new URL('../docs/api.md', import.meta.url), 'utf8');
      assert.match(docs, /not\s+failed\s+`health\.failures_to_cool`\s+times\s+in\s+a\s+row\s+\(5\s+by\s+default/);
      assert.doesNotMatch(docs, /failed three times/);
    } finally {
      await harness.close();
    }
  });
});
