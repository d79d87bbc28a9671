import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildServer } from '../../test/helpers/build-server.ts';
import { runGateway, succeedGateway, temporaryFolders } from '../testing/cli-runner.ts';
import { sampleKey, sampleReceipt } from '../testing/store-samples.ts';
import type { ReceiptRecord } from '../storage/records.ts';
import { createSqliteStore } from '../storage/sqlite/sqlite-store.ts';

const folders = temporaryFolders();
before(() => buildServer());
after(() => folders.removeAll());

const KEY_A = sampleKey();
const KEY_B = sampleKey({ id: 'key_000000002bbbbbbbbbbbb', hash: 'hash-b', name: 'ci, "nightly"' });
const usage = (inputTokens: number, outputTokens: number) => ({
  inputTokens,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  outputTokens,
  reasoningTokens: 0,
});
const ofKey = (key: typeof KEY_A) => ({ keyId: key.id, keyPrefix: key.prefix });
const receipts: ReceiptRecord[] = [
  sampleReceipt({ id: 'rcpt_1', requestId: 'req_1', createdAt: '2026-03-01T10:00:00.000Z', costNano: 345_000, usage: usage(1200, 300) }),
  sampleReceipt({
    id: 'rcpt_2',
    requestId: 'req_2',
    ...ofKey(KEY_B),
    createdAt: '2026-03-01T11:00:00.000Z',
    requestedModel: 'svc/best',
    answeringModel: 'sim/sage',
    costNano: 1_000_000_001,
    usage: usage(1000, 500),
  }),
  sampleReceipt({
    id: 'rcpt_3',
    requestId: 'req_3',
    createdAt: '2026-03-02T09:00:00.000Z',
    requestedModel: 'weird,"model"',
    answeringModel: null,
    status: 'failed',
    errorCode: 'provider_unavailable',
    costNano: 0,
    usage: null,
  }),
  sampleReceipt({
    id: 'rcpt_4',
    requestId: 'req_4',
    ...ofKey(KEY_B),
    createdAt: '2026-03-02T12:00:00.000Z',
    status: 'cancelled',
    costNano: 5,
    usage: usage(10, 2),
  }),
  sampleReceipt({
    id: 'rcpt_5',
    requestId: 'req_5',
    createdAt: '2026-03-03T00:00:00.000Z',
    requestedModel: 'sim/sage',
    answeringModel: 'sim/sage',
    costNano: 7,
    usage: usage(1, 1),
  }),
];

/** RFC 4180 fields back from CSV text: quoted fields may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [[]];
  let field = '';
  let quoted = false;
  const endField = () => {
    rows.at(-1)!.push(field);
    field = '';
  };
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (quoted && char === '"' && text[index + 1] === '"') {
      field += '"';
      index++;
    } else if (quoted && char === '"') quoted = false;
    else if (quoted) field += char;
    else if (char === '"') quoted = true;
    else if (char === ',') endField();
    else if (char === '\n') {
      endField();
      rows.push([]);
    } else field += char;
  }
  rows.at(-1)!.push(field);
  return rows.filter((row) => row.length > 1 || row[0] !== '');
}

describe('gateway receipts and usage', () => {
  let database = '';
  const run = (...args: string[]) => succeedGateway(database, args);
  const ids = async (...args: string[]) =>
    (JSON.parse(await run('receipts', '--json', ...args)) as Array<{ id: string }>).map((receipt) => receipt.id);

  before(async () => {
    database = join(await folders.make(), 'gateway.db');
    const store = createSqliteStore(database);
    await store.migrate();
    await store.insertKey(KEY_A);
    await store.insertKey(KEY_B);
    for (const receipt of receipts) await store.recordReceipt(receipt);
    await store.close();
  });

  test('receipts: newest first, the API receipt objects in --json, filtered by key, model, status and time', async () => {
    const all = JSON.parse(await run('receipts', '--json'));
    assert.deepEqual(
      all.map((receipt: { id: string }) => receipt.id),
      ['rcpt_5', 'rcpt_4', 'rcpt_3', 'rcpt_2', 'rcpt_1'],
    );
    assert.deepEqual([all[3].cost, all[3].model, all[3].key.prefix, all[3].usage.prompt_tokens], ['1.000000001', 'sim/sage', KEY_B.prefix, 1000]);
    assert.deepEqual(await ids('--key', KEY_B.prefix), ['rcpt_4', 'rcpt_2']);
    assert.deepEqual(await ids('--key', KEY_A.id), ['rcpt_5', 'rcpt_3', 'rcpt_1']);
    assert.deepEqual(await ids('--model', 'sim/sage'), ['rcpt_5', 'rcpt_2'], 'requested or answering');
    assert.deepEqual(await ids('--status', 'failed'), ['rcpt_3']);
    assert.deepEqual(await ids('--since', '2026-03-02', '--until', '2026-03-03'), ['rcpt_4', 'rcpt_3'], 'until is exclusive');
    assert.deepEqual(await ids('--since', '2026-03-01T10:30', '--key', KEY_B.prefix, '--status', 'succeeded'), ['rcpt_2']);
    assert.deepEqual(await ids('--limit', '2'), ['rcpt_5', 'rcpt_4']);
    assert.deepEqual(await ids('--since', '1h'), [], 'a duration counts back from now');
  });

  test('receipts --csv parses back to the same fields; the table shows UTC times and exact costs', async () => {
    const csv = await run('receipts', '--csv');
    const [header, ...rows] = parseCsv(csv);
    assert.deepEqual(header!.slice(0, 3), ['id', 'request_id', 'created_at']);
    assert.equal(rows.length, 5);
    const fields = [
      'id',
      'created_at',
      'key_prefix',
      'requested_model',
      'model',
      'status',
      'cost_usd',
      'input_tokens',
      'output_tokens',
      'error_code',
    ];
    const pick = (row: string[]) => fields.map((field) => row[header!.indexOf(field)]);
    assert.deepEqual(pick(rows[2]!), [
      'rcpt_3',
      '2026-03-02T09:00:00.000000000Z',
      KEY_A.prefix,
      'weird,"model"',
      '',
      'failed',
      '0.000000000',
      '0',
      '0',
      'provider_unavailable',
    ]);
    assert.deepEqual(pick(rows[3]!), [
      'rcpt_2',
      '2026-03-01T11:00:00.000000000Z',
      KEY_B.prefix,
      'svc/best',
      'sim/sage',
      'succeeded',
      '1.000000001',
      '1000',
      '500',
      '',
    ]);
    assert.equal((await run('receipts', '--csv', '--limit', '2')).trim().split('\n').length, 3, 'a header and two rows');

    const table = await run('receipts', '--limit', '5');
    assert.match(table, /^ID\s+TIME \(UTC\)\s+KEY\s+REQUESTED\s+MODEL\s+STATUS\s+COST \(USD\)\s+IN\s+OUT\n/);
    assert.match(table, /rcpt_1\s+2026-03-01 10:00:00Z\s+svc_aaaaaaaa\s+svc\/fast\s+sim\/swift-mini\s+succeeded\s+0\.000345000\s+1200\s+300/);
    assert.match(table, /failed \(provider_unavailable\)/);
  });

  test('usage by key, model and day: sums checked by hand, as a table, --json and --csv', async () => {
    const range = ['--since', '2026-03-01', '--until', '2026-03-04'];
    const byKey = JSON.parse(await run('usage', '--json', ...range));
    assert.equal(byKey.by, 'key');
    assert.deepEqual(byKey.data, [
      { key: KEY_A.id, prefix: KEY_A.prefix, name: 'test key', requests: 3, errors: 1, input_tokens: 1201, output_tokens: 301, cost: '0.000345007' },
      {
        key: KEY_B.id,
        prefix: KEY_B.prefix,
        name: 'ci, "nightly"',
        requests: 2,
        errors: 0,
        input_tokens: 1010,
        output_tokens: 502,
        cost: '1.000000006',
      },
    ]);
    const byModel = JSON.parse(await run('usage', '--by', 'model', '--json', ...range));
    assert.deepEqual(
      byModel.data.map((row: Record<string, unknown>) => [row.model, row.requests, row.errors, row.input_tokens, row.output_tokens, row.cost]),
      [
        ['sim/sage', 2, 0, 1001, 501, '1.000000008'],
        ['sim/swift-mini', 2, 0, 1210, 302, '0.000345005'],
        ['weird,"model"', 1, 1, 0, 0, '0.000000000'],
      ],
    );
    const [header, ...days] = parseCsv(await run('usage', '--by', 'day', '--csv', ...range));
    assert.deepEqual(header, ['day', 'requests', 'errors', 'input_tokens', 'output_tokens', 'cost_usd']);
    assert.deepEqual(days, [
      ['2026-03-01', '2', '0', '2200', '800', '1.000345001'],
      ['2026-03-02', '2', '1', '10', '2', '0.000000005'],
      ['2026-03-03', '1', '0', '1', '1', '0.000000007'],
    ]);
    const [, ...keys] = parseCsv(await run('usage', '--csv', ...range));
    assert.equal(keys[1]![2], 'ci, "nightly"');

    const table = await run('usage', '--by', 'day', ...range);
    assert.match(table, /^Usage by day, 2026-03-01T00:00Z to 2026-03-04T00:00Z\nDAY\s+REQUESTS\s+ERRORS\s+IN TOKENS\s+OUT TOKENS\s+COST \(USD\)\n/);
    assert.match(table, /\nTOTAL\s+5\s+1\s+2211\s+803\s+1\.000345013$/m);
    assert.match(await run('usage', '--since', '2025-01-01', '--until', '2025-02-01'), /^No requests from 2025-01-01T00:00Z/);
  });

  test('mistakes: one line with the reason, and the nearest name when there is one', async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [['receipts', '--status', 'faild'], 1, /unknown status "faild" \(did you mean failed\?\)/],
      [['receipts', '--key', 'svc_aaaaaaab'], 1, /no key matches "svc_aaaaaaab".*\(did you mean svc_aaaaaaaa\?\)/],
      [['receipts', '--since', 'yesterday'], 1, /--since must be a date/],
      [['receipts', '--limit', '0'], 1, /--limit must be a whole number from 1/],
      [['receipts', '--json', '--csv'], 2, /choose one of --json and --csv/],
      [['receipts', '--limt', '3'], 2, /Unknown option '--limt' \(did you mean --limit\?\)/],
      [['receipts', '--by', 'day'], 2, /receipts does not take --by/],
      [['usage', '--by', 'models'], 1, /--by must be one of: key, model, day; got "models" \(did you mean model\?\)/],
      [['usage', '--since', '2026-03-04', '--until', '2026-03-01'], 1, /must be before --until/],
      [['recipts'], 2, /unknown command "recipts" \(did you mean receipts\?\)/],
      [['members', 'lst'], 2, /members: unknown subcommand "lst" \(did you mean list\?\); use one of: list, add, remove/],
    ];
    const outcomes = await Promise.all(cases.map(([args]) => runGateway(database, args)));
    outcomes.forEach((outcome, index) => {
      const [args, code, message] = cases[index]!;
      assert.equal(outcome.code, code, `gateway ${args.join(' ')}: ${outcome.stderr}`);
      assert.match(outcome.stderr.split('\n')[0]!, message, args.join(' '));
      assert.equal(outcome.stdout, '');
    });
  });
});
