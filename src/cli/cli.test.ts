import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hashApiKey } from '../auth/api-key-format.ts';
import { createSqliteStore } from '../storage/sqlite/sqlite-store.ts';
import { DEFAULT_ACCOUNT_ID } from '../storage/store.ts';
import { buildServer } from '../../test/helpers/build-server.ts';
import { runGateway, type CliOutcome } from '../testing/cli-runner.ts';

const directories: string[] = [];

// The launcher runs the compiled build: build it from the sources under test.
before(() => buildServer());

after(async () => {
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

async function temporaryDatabase(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-cli-'));
  directories.push(directory);
  return join(directory, 'gateway.db');
}

type Outcome = CliOutcome;

/** Runs the real launcher, as an operator would, against the database at `databasePath`. */
const gateway = (databasePath: string, ...args: string[]): Promise<Outcome> => runGateway(databasePath, args);

async function succeed(databasePath: string, ...args: string[]): Promise<string> {
  const outcome = await gateway(databasePath, ...args);
  assert.equal(outcome.code, 0, `gateway ${args.join(' ')} failed: ${outcome.stderr}`);
  return outcome.stdout;
}

async function withStore<T>(databasePath: string, body: (store: ReturnType<typeof createSqliteStore>) => Promise<T>): Promise<T> {
  const store = createSqliteStore(databasePath);
  try {
    await store.migrate();
    return await body(store);
  } finally {
    await store.close();
  }
}

/** Every file SQLite keeps for this database (main file, -wal, -shm), as raw bytes. */
async function databaseBytes(databasePath: string): Promise<Buffer> {
  const directory = join(databasePath, '..');
  const names = (await readdir(directory)).filter((name) => name.startsWith('gateway.db'));
  return Buffer.concat(await Promise.all(names.map((name) => readFile(join(directory, name)))));
}

describe('gateway CLI', () => {
  test('keys create --json prints the key once and the database holds only its hash', async () => {
    const databasePath = await temporaryDatabase();
    const created = JSON.parse(
      await succeed(
        databasePath,
        'keys',
        'create',
        '--json',
        '--name',
        'ci',
        '--scopes',
        'inference,fix',
        '--models',
        'svc/fast,sim/sage',
        '--daily-limit',
        '5',
        '--rate-limit',
        '30',
        '--expires',
        '30d',
      ),
    );
    assert.match(created.key, /^svc_[0-9A-Za-z]{40}$/);
    assert.match(created.id, /^key_/);
    assert.equal(created.prefix, created.key.slice(0, 12));
    assert.equal(created.name, 'ci');
    assert.deepEqual(created.scopes, ['inference', 'fix']);
    assert.deepEqual(created.models, ['svc/fast', 'sim/sage']);
    assert.equal(created.daily_limit, '5.000000000');
    assert.equal(created.rate_limit_per_minute, 30);
    const expiresInDays = (Date.parse(created.expires_at) - Date.now()) / 86_400_000;
    assert.ok(expiresInDays > 29.9 && expiresInDays <= 30, `expires_at ${created.expires_at}`);

    const bytes = await databaseBytes(databasePath);
    assert.ok(bytes.includes(hashApiKey(created.key)), 'the scan must see the stored hash');
    assert.equal(bytes.includes(created.key), false, 'the full key must not be stored anywhere');
    assert.equal(bytes.includes(created.key.slice(12)), false, 'nor its secret part');
    const stored = await withStore(databasePath, (store) => store.findKeyByHash(hashApiKey(created.key)));
    assert.equal(stored?.id, created.id);
    assert.equal(stored?.dailyLimitNano, 5_000_000_000);
  });

  test('keys create without --json shows the key with a warning; defaults apply', async () => {
    const databasePath = await temporaryDatabase();
    const text = await succeed(databasePath, 'keys', 'create');
    const keys = text.match(/svc_[0-9A-Za-z]{40}/g) ?? [];
    assert.equal(keys.length, 1, text);
    assert.match(text, /not shown again/);
    const [stored] = await withStore(databasePath, (store) => store.listKeys(DEFAULT_ACCOUNT_ID));
    assert.deepEqual(stored?.scopes, ['inference']);
    assert.equal(stored?.models, null);
    assert.equal(stored?.expiresAt, null);
  });

  test('keys list, revoke by prefix, list again, audit entry', async () => {
    const databasePath = await temporaryDatabase();
    const first = JSON.parse(await succeed(databasePath, 'keys', 'create', '--json', '--name', 'first'));
    const second = JSON.parse(await succeed(databasePath, 'keys', 'create', '--json', '--name', 'second'));

    const table = await succeed(databasePath, 'keys', 'list');
    assert.match(table, /^ID\s+PREFIX\s+NAME/);
    assert.ok(table.includes(first.prefix) && table.includes(second.prefix));
    assert.equal(table.includes(first.key), false);

    const revoked = await succeed(databasePath, 'keys', 'revoke', first.prefix);
    assert.match(revoked, new RegExp(`Revoked key ${first.id}`));

    const listed = JSON.parse(await succeed(databasePath, 'keys', 'list', '--json'));
    assert.deepEqual(
      listed.map((key: { id: string; status: string }) => [key.id, key.status]),
      [
        [second.id, 'active'],
        [first.id, 'revoked'],
      ],
    );
    assert.equal(JSON.stringify(listed).includes('hash'), false);
    assert.match(await succeed(databasePath, 'keys', 'list'), /revoked/);

    const audit = await withStore(databasePath, (store) => store.listAudit(DEFAULT_ACCOUNT_ID, 10));
    assert.deepEqual(
      audit.map((entry) => [entry.action, entry.actor, entry.detail]),
      [
        ['key.revoked', 'cli', { keyId: first.id, prefix: first.prefix }],
        ['key.created', 'cli', { keyId: second.id, prefix: second.prefix, name: 'second', scopes: ['inference'], models: null }],
        ['key.created', 'cli', { keyId: first.id, prefix: first.prefix, name: 'first', scopes: ['inference'], models: null }],
      ],
    );

    const again = await gateway(databasePath, 'keys', 'revoke', first.id);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no active key matches/);
  });

  test('funds add and show keep exact amounts', async () => {
    const databasePath = await temporaryDatabase();
    assert.deepEqual(JSON.parse(await succeed(databasePath, 'funds', 'add', '12.5', '--json')), { added: '12.500000000', balance: '12.500000000' });
    assert.match(await succeed(databasePath, 'funds', 'add', '0.000000001', '--note', 'one nano'), /Balance: \$12\.500000001/);
    assert.deepEqual(JSON.parse(await succeed(databasePath, 'funds', 'show', '--json')), {
      balance: '12.500000001',
      funds_added: '12.500000001',
      charged: '0.000000000',
    });
    assert.match(await succeed(databasePath, 'funds', 'show'), /Balance: \$12\.500000001/);
    const balance = await withStore(databasePath, (store) => store.getBalance(DEFAULT_ACCOUNT_ID));
    assert.equal(balance, 12_500_000_001);
  });

  test('budget set, show and clear: the store enforces it and the audit log records it', async () => {
    const databasePath = await temporaryDatabase();
    assert.deepEqual(JSON.parse(await succeed(databasePath, 'budget', 'set', '25.5', '--json')), { monthly_budget: '25.500000000' });
    const shown = JSON.parse(await succeed(databasePath, 'budget', 'show', '--json'));
    assert.equal(shown.monthly_budget, '25.500000000');
    assert.equal(shown.spend, '0.000000000');
    const month = new Date().toISOString().slice(0, 7);
    assert.equal(
      await withStore(databasePath, async (store) => (await store.accountSummary(DEFAULT_ACCOUNT_ID, month)).monthlyBudgetNano),
      25_500_000_000,
    );
    assert.match(await succeed(databasePath, 'budget', 'clear'), /removed/);
    const audit = await withStore(databasePath, (store) => store.listAudit(DEFAULT_ACCOUNT_ID, 5));
    assert.deepEqual(
      audit.filter((entry) => entry.action === 'budget.set').map((entry) => entry.detail.monthly_budget),
      [null, '25.500000000'],
    );
    const bad = await gateway(databasePath, 'budget', 'set', 'lots');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /budget set: "lots" is not a non-negative USD amount/);
  });

  test('migrate is repeatable', async () => {
    const databasePath = await temporaryDatabase();
    assert.match(await succeed(databasePath, 'migrate'), /up to date/);
    assert.match(await succeed(databasePath, 'migrate'), /up to date/);
  });

  test('bad input fails with one line on stderr and no stack trace', async () => {
    const databasePath = await temporaryDatabase();
    const cases: Array<[args: string[], code: number, message: RegExp]> = [
      [['keys', 'create', '--scopes', 'inference,admin'], 1, /unknown scope "admin"/],
      [['keys', 'create', '--models', 'svc/fast,gpt-9'], 1, /unknown model "gpt-9"/],
      [['keys', 'create', '--daily-limit', 'ten'], 1, /--daily-limit/],
      [['keys', 'create', '--rate-limit', '0'], 1, /--rate-limit/],
      [['keys', 'create', '--expires', '2001-01-01'], 1, /not in the future/],
      [['keys', 'create', '--expires', 'soon'], 1, /--expires must be/],
      [['funds', 'add', '12.345.6'], 1, /not a non-negative USD amount/],
      [['funds', 'add', '0.0000000001'], 1, /finer than one nano-dollar/],
      [['funds', 'add', '0'], 1, /more than 0/],
      [['keys', 'revoke', 'key_doesnotexist'], 1, /no active key matches "key_doesnotexist"/],
      [['keys', 'revoke'], 2, /needs <id-or-prefix>/],
      [['keys', 'list', '--name', 'x'], 2, /does not take --name/],
      [['keys', 'rotate'], 2, /unknown subcommand "rotate"/],
      [['keys', 'list', '--bogus'], 2, /Unknown option '--bogus'/],
      [['--config', '/no/such/gateway.yaml', 'keys', 'list'], 1, /cannot read config file/],
    ];
    const outcomes = await Promise.all(cases.map(([args]) => gateway(databasePath, ...args)));
    outcomes.forEach((outcome, index) => {
      const [args, code, message] = cases[index]!;
      const label = `gateway ${args.join(' ')}`;
      assert.equal(outcome.code, code, `${label}: ${outcome.stderr}`);
      assert.match(outcome.stderr, message, label);
      assert.doesNotMatch(outcome.stderr, /\n\s+at /, `${label} printed a stack trace`);
      assert.equal(outcome.stdout, '', label);
      if (code === 1) assert.equal(outcome.stderr.trim().split('\n').length, 1, `${label}: ${outcome.stderr}`);
    });
    const keys = await withStore(databasePath, (store) => store.listKeys(DEFAULT_ACCOUNT_ID));
    assert.deepEqual(keys, [], 'no key is created by a rejected command');
  });

  test('help, no arguments and unknown commands', async () => {
    const databasePath = await temporaryDatabase();
    for (const args of [['help'], [], ['--help'], ['keys', 'list', '-h']]) {
      const outcome = await gateway(databasePath, ...args);
      assert.equal(outcome.code, 0);
      for (const command of ['start', 'keys create', 'keys list', 'keys revoke', 'funds add', 'funds show', 'migrate', '--config', '--json']) {
        assert.ok(outcome.stdout.includes(command), `usage lacks ${command}`);
      }
    }
    const unknown = await gateway(databasePath, 'frobnicate');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "frobnicate"/);
    assert.match(unknown.stderr, /Usage: gateway/);
  });
});
