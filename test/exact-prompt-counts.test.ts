import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

/**
 * For a model whose tokenizer is known (OpenAI's gpt-4o-mini here, o200k_base), the gateway's
 * count of a prompt is what the provider reports: Anthropic clients read it in message_start
 * (LangChain's ChatAnthropic takes it from there), and a hold placed on it asks less of the
 * balance than the byte or cl100k bound would.
 */
const withModel = (price: string) => (text: string) =>
  text
    .replace('price: { input: "0.40", cached_input: "0.10", output: "1.60" }', `price: ${price}`)
    .replace(
      'models:\n',
      `models:\n  - { id: up/gpt-4o-mini, provider: up, upstream: gpt-4o-mini, price: ${price}, context_window: 128000, max_output_tokens: 16000, capabilities: { tools: true, vision: true, reasoning: false } }\n`,
    );

const essay = Array.from(
  { length: 300 },
  (_, index) => `Paragraph ${index}: the ledger keeps every hold apart from the balance it borrows from.`,
).join('\n');

function events(text: string): Array<{ event: string; data: any }> {
  return text
    .split('\n\n')
    .filter((block) => block.includes('data: '))
    .map((block) => ({ event: /^event: (.+)$/m.exec(block)?.[1] ?? 'message', data: JSON.parse(/^data: (.+)$/m.exec(block)![1]!) }));
}

describe('message_start on an OpenAI model with a known tokenizer', () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness({ editConfig: withModel('{ input: "0.15", output: "0.60" }') });
  });
  after(() => harness.close());

  async function startAndCharged(body: Record<string, unknown>): Promise<{ start: number; charged: number }> {
    const response = await harness.post('/v1/messages', { model: 'up/gpt-4o-mini', max_tokens: 200, stream: true, ...body }, harness.key, {
      'anthropic-version': '2023-06-01',
    });
    assert.equal(response.status, 200, await response.clone().text());
    const start = events(await response.text()).find((entry) => entry.event === 'message_start')!.data.message.usage.input_tokens;
    const receipt = (await (await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).json()) as any;
    return { start, charged: receipt.usage.prompt_tokens };
  }

  test('plain text with a system prompt: the exact count the provider reports', async () => {
    const { start, charged } = await startAndCharged({ system: 'You answer in one line.', messages: [{ role: 'user', content: essay }] });
    assert.ok(charged > 3_000);
    assert.equal(start, charged);
  });

  test('tools and a tool round trip: the exact count too', async () => {
    const { start, charged } = await startAndCharged({
      tools: [
        {
          name: 'get_weather',
          description: 'Weather in a city.',
          input_schema: {
            type: 'object',
            properties: { city: { type: 'string', description: 'The city' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
            required: ['city'],
          },
        },
      ],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18 degrees, clear' }] },
      ],
    });
    assert.equal(start, charged);
  });
});

describe('a hold on the exact count', () => {
  test('admits a request the cl100k bound would refuse, and holds no less than it is charged', async () => {
    // Input at $1 per 1M tokens (1,000 nano-USD a token): the prompt is the whole hold.
    const probe = await startHarness({ editConfig: withModel('{ input: "1", output: "0.01" }') });
    const body = { model: 'up/gpt-4o-mini', max_tokens: 1, messages: [{ role: 'user', content: essay }] };
    const counted = (await (await probe.post('/v1/chat/completions', body)).json()) as { usage: { prompt_tokens: number } };
    await probe.close();
    const tokens = counted.usage.prompt_tokens;

    // Funds for the prompt and a tenth more: below the cl100k bound (x1.35), above the exact one (x1.05).
    const harness = await startHarness({ editConfig: withModel('{ input: "1", output: "0.01" }'), fundsNano: Math.ceil(tokens * 1.1) * 1_000 });
    after(() => harness.close());
    const response = await harness.post('/v1/chat/completions', body);
    assert.equal(response.status, 200, await response.clone().text());
    await response.text();
    const receipt = (await (await harness.get(`/v1/receipts/${response.headers.get('x-svc-receipt-id')}`)).json()) as any;
    assert.equal(receipt.usage.prompt_tokens, tokens);
    assert.equal(receipt.exceeded_hold, false);
    assert.ok(Number(receipt.hold) * 1e9 <= Math.ceil(tokens * 1.05 + 1) * 1_000, `hold ${receipt.hold} for ${tokens} tokens`);

    // The same prompt for a model whose tokenizer is not known: held on the cl100k bound, refused.
    harness.fake.reset();
    const unknown = await harness.post('/v1/chat/completions', { ...body, model: 'up/alpha' });
    assert.equal(unknown.status, 402);
    assert.equal(harness.fake.requests.length, 0);
  });
});
