import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { PromptMeasure } from '../src/tokens/token-estimate.ts';
import { parseChatCompletionRequest } from '../src/formats/openai-chat/parse-chat-request.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

/**
 * The input bound a hold is based on must never be below the prompt tokens a provider reports,
 * and not wildly above them either. The fake upstream counts prompts the way each provider does
 * (test/fake-upstream/count-prompt-tokens.ts); every sample goes to an OpenAI-format and an
 * Anthropic-format model.
 */

const MODELS = ['up/alpha', 'anth/claude'];

// Real TypeScript: the estimator itself.
const TYPESCRIPT = readFileSync(new URL('../src/tokens/token-estimate.ts', import.meta.url), 'utf8');

const PYTHON = `
import asyncio
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Hold:
    account_id: str
    amount_nano: int
    expires_at: float
    settled: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


class Ledger:
    """Keeps balances in integer nano-USD; holds borrow, settlements return the difference."""

    def __init__(self, store):
        self._store = store
        self._lock = asyncio.Lock()

    async def place_hold(self, account_id: str, amount_nano: int, ttl_seconds: float = 600.0) -> Hold:
        async with self._lock:
            balance = await self._store.balance(account_id)
            active = await self._store.active_holds(account_id)
            if balance - active < amount_nano:
                raise InsufficientBalance(account_id, needed=amount_nano, available=balance - active)
            hold = Hold(account_id, amount_nano, expires_at=self._store.now() + ttl_seconds)
            await self._store.insert_hold(hold)
            return hold

    async def settle(self, hold: Hold, actual_nano: int) -> int:
        if hold.settled:
            raise ValueError(f"hold for {hold.account_id} already settled")
        async with self._lock:
            await self._store.charge(hold.account_id, actual_nano)
            await self._store.release_hold(hold)
            hold.settled = True
            return hold.amount_nano - actual_nano


def load_prices(path: str) -> dict[str, tuple[int, int]]:
    with open(path, encoding="utf-8") as handle:
        raw = json.load(handle)
    return {model: (int(p["input"] * 1000), int(p["output"] * 1000)) for model, p in raw.items()}
`;

const PROSE = `Before the first call to a provider, the gateway reserves the most a request could cost.
It cannot know the answer's length in advance, so it assumes the longest answer the request allows,
and it cannot know exactly how the provider will count the prompt, so it counts with a real tokenizer
and adds a margin. When the provider reports what it actually used, the gateway charges that amount
and releases the reservation. Nothing is lost either way: if the provider ever reports more than was
held, the actual cost is still charged, and the receipt says so.

The reservation matters most to people with small balances. A bound that is far too high refuses
requests that would have been affordable, which looks like a bug from the outside: the account has
money, yet the request fails with an insufficient-balance error. A bound that is too low lets a
request run past the balance. Both are wrong, but they are not equally wrong, so the estimate leans
high, by a quarter or so, and never by a factor of three.

Agents make this harder. A coding agent resends its whole conversation on every turn, with a dozen
tool definitions, file contents and command output, and it may attach screenshots. Each of those
must be counted, and counted quickly, because the estimate runs on every request.`;

const JAPANESE = `このゲートウェイは、リクエストごとに最悪の場合のコストを事前に確保し、プロバイダーから実際の使用量が返ってきた時点で精算します。
残高が少ないユーザーを不必要に拒否しないように、見積もりは実際のトークン数に近い値である必要があります。
一方で、見積もりが実際より少ないと、残高を超えて請求してしまう可能性があります。そのため、実際のトークナイザーで数えたうえで安全マージンを加えています。
画像は、モデルごとの最大トークン数で計算します。長い会話を毎回送り直すエージェントのために、テキストごとのトークン数をキャッシュしています。
東京の天気は晴れ、最高気温は二十八度の予報です。週末は雨になるかもしれません。`;

const CHINESE = `网关在每个请求之前预留最坏情况下的费用，并在提供商返回实际用量后进行结算。为了不无故拒绝余额较少的用户，
估算值应当接近真实的令牌数量。另一方面，如果估算低于实际用量，就可能收取超过余额的费用。因此我们使用真实的分词器计数，并加上安全余量。
한국어 문장도 섞여 있습니다: 게이트웨이는 요청마다 최대 비용을 먼저 예약하고, 실제 사용량이 보고되면 정산합니다.`;

const HINDI = `यह गेटवे हर अनुरोध से पहले सबसे खराब स्थिति की लागत को सुरक्षित रखता है और प्रदाता से वास्तविक उपयोग की जानकारी मिलने के बाद हिसाब बराबर करता है।
कम शेष राशि वाले उपयोगकर्ताओं को बिना कारण मना न करना पड़े, इसलिए अनुमान वास्तविक टोकन संख्या के करीब होना चाहिए।
दूसरी ओर, यदि अनुमान वास्तविक से कम हो, तो शेष राशि से अधिक शुल्क लग सकता है। इसीलिए हम असली टोकनाइज़र से गिनती करते हैं और उसमें सुरक्षा का अंतर जोड़ते हैं।
चित्रों को मॉडल की अधिकतम टोकन सीमा पर गिना जाता है, और लंबी बातचीत के लिए गिनती को याद रखा जाता है।`;

const ARABIC = `تحجز البوابة قبل كل طلب أسوأ تكلفة ممكنة، ثم تسوي الحساب عندما يعيد المزود الاستخدام الفعلي.
يجب أن يكون التقدير قريبًا من العدد الحقيقي للرموز حتى لا نرفض المستخدمين ذوي الأرصدة الصغيرة دون داعٍ.
ومن ناحية أخرى، إذا كان التقدير أقل من الاستخدام الفعلي فقد نفرض رسومًا تتجاوز الرصيد. لذلك نعدّ الرموز بمحلل حقيقي ونضيف هامش أمان.
تُحسب الصور بالحد الأقصى للنموذج، وتُحفظ أعداد الرموز للمحادثات الطويلة التي يعيد الوكلاء إرسالها في كل دور.`;

const EMOJI = `🚀🔥 Launch day!!! 🎉🎉🎉 Huge thanks to the whole team 🙏💯💯
👨‍👩‍👧‍👦 family plan is live 🏳️‍🌈 pride edition 🇯🇵🇮🇳🇸🇦🇧🇷🇩🇪 now in 5 regions 🌍🌏🌎
Status: ✅ billing ✅ receipts ⚠️ limits (beta) ❌ refunds (soon™)
Reactions: 😂😂🤣😍🥹🫠🫡🤌🏽👍🏿👋🏼🧑🏾‍💻👩🏻‍🔬🐛➡️🦋
Weather: ☀️🌤️⛅🌦️🌧️⛈️🌩️❄️🌪️ — coffee ☕☕☕ — pizza 🍕🍕 — 🎂🕯️🎈
Score: 🥇🥈🥉 🏆 ⭐⭐⭐⭐⭐ 10/10 would deploy again 🚢🚢`;

/** Deterministic hex noise: ids and hashes tokenize worst of all ordinary text. */
function logLines(count: number): string {
  let seed = 42;
  const hex = (length: number): string => {
    let out = '';
    while (out.length < length) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      out += seed.toString(16);
    }
    return out.slice(0, length);
  };
  const lines: string[] = [];
  for (let index = 0; index < count; index++) {
    const id = `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`;
    lines.push(
      `2025-06-0${(index % 9) + 1}T12:${String(index % 60).padStart(2, '0')}:07.${hex(3)}Z INFO request_id=${id} sha=${hex(40)} latency_ms=${index * 7} path=/v1/chat/completions`,
    );
  }
  return lines.join('\n');
}

const schema = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required, additionalProperties: false });
const text = (description: string) => ({ type: 'string', description });

/** A coding agent's tool set. */
const AGENT_TOOLS = [
  [
    'read_file',
    'Read a file from the workspace. Returns the content with line numbers; use offset and limit for large files.',
    schema(
      {
        path: text('Path relative to the workspace root'),
        offset: { type: 'integer', minimum: 0 },
        limit: { type: 'integer', minimum: 1, maximum: 2000 },
      },
      ['path'],
    ),
  ],
  [
    'write_file',
    'Create or overwrite a file with the given content. Parent directories are created as needed.',
    schema({ path: text('Path relative to the workspace root'), content: text('The full new content') }, ['path', 'content']),
  ],
  [
    'edit_file',
    'Replace an exact, unique string in a file. Fails when old_string is missing or appears more than once.',
    schema(
      {
        path: text('File to edit'),
        old_string: text('Exact text to replace'),
        new_string: text('Replacement text'),
        replace_all: { type: 'boolean', default: false },
      },
      ['path', 'old_string', 'new_string'],
    ),
  ],
  [
    'bash',
    'Run a shell command in the workspace and return stdout, stderr and the exit code. Long-running commands time out after the given number of seconds.',
    schema(
      {
        command: text('The command line'),
        timeout_seconds: { type: 'integer', minimum: 1, maximum: 600 },
        description: text('Five to ten words on what the command does'),
      },
      ['command'],
    ),
  ],
  [
    'grep',
    'Search file contents with a regular expression (ripgrep syntax).',
    schema(
      {
        pattern: text('Regular expression'),
        path: text('Directory or file to search'),
        glob: text('Only files matching this glob, e.g. *.ts'),
        case_insensitive: { type: 'boolean' },
        output_mode: { type: 'string', enum: ['content', 'files_with_matches', 'count'] },
      },
      ['pattern'],
    ),
  ],
  [
    'glob',
    'Find files whose path matches a glob pattern, newest first.',
    schema({ pattern: text('Glob such as src/**/*.test.ts'), path: text('Directory to search from') }, ['pattern']),
  ],
  [
    'list_directory',
    'List the entries of a directory with their sizes.',
    schema({ path: text('Directory path'), ignore: { type: 'array', items: { type: 'string' }, description: 'Globs to leave out' } }, ['path']),
  ],
  [
    'web_fetch',
    'Fetch a URL and return its content converted to Markdown.',
    schema({ url: { type: 'string', format: 'uri' }, prompt: text('What to extract from the page') }, ['url', 'prompt']),
  ],
  [
    'web_search',
    'Search the web and return titles, URLs and snippets.',
    schema(
      {
        query: text('Search query'),
        allowed_domains: { type: 'array', items: { type: 'string' } },
        blocked_domains: { type: 'array', items: { type: 'string' } },
      },
      ['query'],
    ),
  ],
  [
    'todo_write',
    'Replace the task list shown to the user.',
    schema(
      {
        todos: {
          type: 'array',
          items: schema(
            { content: text('The task'), status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] }, id: { type: 'string' } },
            ['content', 'status', 'id'],
          ),
        },
      },
      ['todos'],
    ),
  ],
  [
    'ask_user',
    'Ask the user a question and wait for the answer. Use only when blocked.',
    schema({ question: text('The question'), options: { type: 'array', items: { type: 'string' }, maxItems: 4 } }, ['question']),
  ],
  [
    'run_tests',
    'Run the test suite, or the tests matching a name pattern, and summarise failures.',
    schema({ pattern: text('Test name pattern'), files: { type: 'array', items: { type: 'string' } }, update_snapshots: { type: 'boolean' } }, []),
  ],
].map(([name, description, parameters]) => ({ type: 'function', function: { name, description, parameters } }));

const PNG_1X1 = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

const user = (content: unknown) => ({ role: 'user', content });
const assistant = (content: string | null, toolCalls?: Array<{ id: string; name: string; arguments: unknown }>) => ({
  role: 'assistant',
  content,
  ...(toolCalls
    ? {
        tool_calls: toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        })),
      }
    : {}),
});
const toolResult = (id: string, content: string) => ({ role: 'tool', tool_call_id: id, content });
const SYSTEM = { role: 'system', content: 'You are a careful senior engineer. Answer precisely and show code when it helps.' };

/** ~30 KB of alternating turns, the kind of history a chat client resends. */
function longConversation(): unknown[] {
  const pieces = [PROSE, PYTHON, TYPESCRIPT.slice(0, 2_500), logLines(8), PROSE.split('\n\n')[1]!];
  const messages: unknown[] = [SYSTEM];
  for (let turn = 0; messages.reduce<number>((size, message) => size + JSON.stringify(message).length, 0) < 30_000; turn++) {
    messages.push(user(`Turn ${turn}: what do you make of this?\n\n${pieces[turn % pieces.length]}`));
    messages.push(assistant(`On turn ${turn}: ${PROSE.split('\n\n')[turn % 3]}`));
  }
  messages.push(user('Summarise everything above in three bullet points.'));
  return messages;
}

interface Sample {
  name: string;
  messages: unknown[];
  tools?: unknown[];
  /** English prose or code without tools: the bound must stay within 2x of the provider count. */
  tight?: boolean;
}

const SAMPLES: Sample[] = [
  { name: 'tiny question', messages: [user('hi')] },
  {
    name: 'TypeScript code review',
    messages: [SYSTEM, user(`Review this TypeScript for bugs and performance:\n\n\`\`\`ts\n${TYPESCRIPT}\n\`\`\``)],
    tight: true,
  },
  { name: 'Python code review', messages: [SYSTEM, user(`Please review:\n\n\`\`\`python\n${PYTHON}\n\`\`\``)], tight: true },
  { name: 'English prose', messages: [user(`Edit this for clarity:\n\n${PROSE}`)], tight: true },
  { name: 'Japanese', messages: [user(`次の文章を要約してください。\n\n${JAPANESE}`)] },
  { name: 'Chinese and Korean', messages: [user(`请总结以下内容：\n\n${CHINESE}`)] },
  { name: 'Hindi', messages: [user(`कृपया इसका सारांश दें:\n\n${HINDI}`)] },
  { name: 'Arabic', messages: [user(`لخّص النص التالي:\n\n${ARABIC}`)] },
  { name: 'emoji-heavy', messages: [user(`Rewrite as a formal announcement:\n\n${EMOJI}`)] },
  { name: 'logs with ids and hashes', messages: [user(`Which request was slowest?\n\n${logLines(40)}`)] },
  { name: 'twelve agent tools', messages: [SYSTEM, user('The billing tests fail since this morning. Find out why and fix it.')], tools: AGENT_TOOLS },
  {
    name: 'tool round trip',
    tools: AGENT_TOOLS,
    messages: [
      SYSTEM,
      user('Why does worstCaseCost ignore images?'),
      assistant('Let me look at the estimator and where it is called.', [
        { id: 'call_read_1', name: 'read_file', arguments: { path: 'src/billing/token-estimate.ts' } },
        { id: 'call_grep_1', name: 'grep', arguments: { pattern: 'estimateInputTokens\\(', path: 'src', output_mode: 'content' } },
      ]),
      toolResult('call_read_1', TYPESCRIPT),
      toolResult(
        'call_grep_1',
        'src/billing/worst-case.ts:16:      [estimateInputTokens(request, model), model.price.inputNanoPerMillion],\nsrc/routing/plan-route.ts:27:  const input = estimateInputTokens(request, model);',
      ),
      assistant('It does not ignore them: each image counts at the model maximum. Want me to add a test?'),
      user('Yes, add one and run it.'),
      assistant(null, [
        {
          id: 'call_bash_1',
          name: 'bash',
          arguments: { command: 'node --import tsx --test src/billing/token-estimate.test.ts', timeout_seconds: 120 },
        },
      ]),
      toolResult('call_bash_1', '# tests 13\n# pass 13\n# fail 0\n# duration_ms 496.87'),
    ],
  },
  {
    name: 'image',
    messages: [
      user([
        { type: 'text', text: 'What is in this picture?' },
        { type: 'image_url', image_url: { url: PNG_1X1 } },
      ]),
    ],
  },
  {
    name: 'two images, one low detail',
    messages: [
      user([
        { type: 'text', text: 'Compare these two screenshots.' },
        { type: 'image_url', image_url: { url: PNG_1X1, detail: 'high' } },
        { type: 'image_url', image_url: { url: PNG_1X1, detail: 'low' } },
      ]),
    ],
  },
  { name: 'long conversation (~30 KB)', messages: longConversation() },
];

let harness: Harness;

before(async () => {
  harness = await startHarness();
});
after(() => harness.close());

describe('the input bound of a hold against what providers report', () => {
  for (const sample of SAMPLES) {
    for (const modelId of MODELS) {
      test(`${sample.name} on ${modelId}`, async () => {
        const body = { model: modelId, max_tokens: 512, messages: sample.messages, ...(sample.tools ? { tools: sample.tools } : {}) };
        const response = await harness.post('/v1/chat/completions', body);
        const answer = (await response.json()) as { usage?: { prompt_tokens: number } };
        assert.equal(response.status, 200, JSON.stringify(answer));
        const reported = answer.usage!.prompt_tokens;

        const model = harness.gateway.deps.catalog.models.get(modelId)!;
        const estimate = await new PromptMeasure(parseChatCompletionRequest(body).request).estimate(model);
        assert.ok(reported <= estimate, `${sample.name} on ${modelId}: provider counts ${reported}, the bound is only ${estimate}`);
        if (sample.tight) {
          assert.ok(
            estimate / reported < 2,
            `${sample.name} on ${modelId}: bound ${estimate} is ${(estimate / reported).toFixed(2)}x the ${reported} counted`,
          );
        }
      });
    }
  }
});
