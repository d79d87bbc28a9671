import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tokenizerWork } from '../src/tokens/text-token-count.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';
import { hugePrompts } from './helpers/huge-prompts.ts';

/**
 * Multi-megabyte prompts are decided on bounds (UTF-8 bytes above, a per-byte floor below) and a
 * counted slice at most: never on a tokenizer run over the whole prompt, whose merge step grows
 * quadratically on runs without a break (one character repeated, a CJK paragraph, emoji).
 */

const SIZE = 5 * 1024 * 1024;

const PROMPTS = hugePrompts(SIZE);

// up/vast has room for any of them, so it admits them; the harness's other models have 200K tokens at most.
const withVastModel = (text: string) =>
  text.replace(
    'aliases:',
    `  - id: up/vast
    provider: up
    upstream: vast
    price: { input: "0.10", output: "0.20" }
    context_window: 8000000
    max_output_tokens: 100
    capabilities: { tools: false, vision: false, reasoning: false }
aliases:`,
  );

describe('a 5 MiB prompt of any content is decided on bounds, and other keys do not wait for it', () => {
  let harness: Harness;
  let other: string;
  before(async () => {
    harness = await startHarness({ editConfig: withVastModel });
    other = (await harness.createKey({ name: 'bystander' })).key;
  });
  after(() => harness.close());

  /** Small requests of another key while `work` runs: their slowest round trip. */
  async function bystanderDuring(work: Promise<unknown>): Promise<number> {
    let done = false;
    void work.finally(() => (done = true));
    let slowest = 0;
    while (!done) {
      const started = performance.now();
      const response = await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] }, other);
      await response.arrayBuffer();
      slowest = Math.max(slowest, performance.now() - started);
    }
    return slowest;
  }

  /** Sends `body`, with a bystander meanwhile; the status, time and tokenizer work it took. */
  async function decide(body: string) {
    const tokenized = tokenizerWork.characters;
    const started = performance.now();
    const call = harness.post('/v1/chat/completions', body).then(async (response) => ({ status: response.status, body: await response.json() }));
    const bystanderMs = await bystanderDuring(call);
    const answer = await call;
    return { ...answer, ms: performance.now() - started, bystanderMs, tokenizedCharacters: tokenizerWork.characters - tokenized };
  }

  for (const { name, make, fitsIn200K: fitsBest } of PROMPTS) {
    test(`${name}: refused where it cannot fit, admitted where it can, never tokenized whole`, async () => {
      const content = make();
      const body = (model: string) => JSON.stringify({ model, max_tokens: 10, messages: [{ role: 'user', content }] });
      // The fake upstream would count the prompt itself, in this process, where no script says how many.
      for (const upstream of ['beta', 'vast']) harness.fake.script(upstream, { text: 'ok', usage: { prompt: 1_000_000, completion: 1 } });

      const delay = monitorEventLoopDelay({ resolution: 5 });
      delay.enable();
      const best = await decide(body('svc/best'));
      const vast = await decide(body('up/vast'));
      delay.disable();
      const report =
        `svc/best ${best.status} in ${best.ms.toFixed(0)} ms, up/vast ${vast.status} in ${vast.ms.toFixed(0)} ms; ` +
        `tokenizer ran over ${best.tokenizedCharacters} + ${vast.tokenizedCharacters} characters; ` +
        `bystander slowest ${best.bystanderMs.toFixed(0)} / ${vast.bystanderMs.toFixed(0)} ms; event loop held ${(delay.max / 1e6).toFixed(0)} ms at most`;
      console.log(`# ${name}: ${report}`);

      if (fitsBest) assert.equal(best.status, 200, report);
      else {
        assert.equal(best.status, 400, JSON.stringify(best.body));
        assert.equal(best.body.error.code, 'unsupported_parameter');
        assert.match(best.body.error.message, /context window is 200000 tokens, the request needs (at least|about) \d+/);
      }
      assert.equal(vast.status, 200, JSON.stringify(vast.body));
      assert.equal(vast.body.usage.prompt_tokens, 1_000_000, "the provider's count is charged");
      // Parsed on the body thread and written upstream in pieces, the prompt arrives as it was sent.
      const forwarded = harness.fake.requests.findLast((request) => (request.body as any)?.model === 'vast');
      assert.ok((forwarded?.body as any)?.messages.at(-1).content === content, 'the provider received the prompt as sent');
      // The bounds decide, or a count that stops once past the context: never the whole prompt
      // (the tokenizer's merge step on a 5 MiB run took minutes). Times and the event loop's
      // longest stall are reported above; their targets are measured by `npm run bench:huge`.
      assert.ok(best.tokenizedCharacters + vast.tokenizedCharacters < SIZE / 4, report);
      // One that cannot fit is refused on its lower bound alone, without starting the tokenizer.
      if (!fitsBest) assert.equal(best.tokenizedCharacters, 0, report);
    });
  }

  test('a huge prompt goes upstream as the client escaped it, not escaped again', async () => {
    const content = 'a/b\n'.repeat(600_000);
    // The client writes each / as \/ (valid JSON; JSON.stringify writes /), here in the prompt alone.
    const body = JSON.stringify({ model: 'up/vast', max_tokens: 10, messages: [{ role: 'user', content: '@' }] }).replace(
      '"@"',
      JSON.stringify(content).replaceAll('/', '\\/'),
    );
    harness.fake.script('vast', { text: 'ok', usage: { prompt: 1_000_000, completion: 1 } });
    const response = await harness.post('/v1/chat/completions', body);
    assert.equal(response.status, 200, await response.text());
    const forwarded = harness.fake.requests.findLast((request) => (request.body as any)?.model === 'vast')!;
    assert.equal((forwarded.body as any).messages.at(-1).content, content);
    // One byte more than JSON.stringify's text for each / of the prompt: the client's \/ kept.
    assert.equal(Number(forwarded.headers['content-length']), JSON.stringify(forwarded.body).length + 600_000);
  });
});
