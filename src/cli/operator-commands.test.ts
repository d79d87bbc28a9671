import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildServer } from '../../test/helpers/build-server.ts';
import { runGateway, startGatewayProcess, succeedGateway, temporaryFolders } from '../testing/cli-runner.ts';

const folders = temporaryFolders();
before(() => buildServer());
after(() => folders.removeAll());

/** A simulated provider and one whose key comes from PAID_API_KEY; `balanced` is svc/balanced's candidates. */
function configText(balanced: string): string {
  return `
server: { host: 127.0.0.1, port: 1 }
providers:
  - { id: sim, kind: simulated, simulated: { latency_ms: 0 } }
  - { id: paid, kind: openai, base_url: "http://127.0.0.1:9/v1", api_key: "\${PAID_API_KEY}", headers: { x-team: "\${PAID_TEAM:-core}" } }
models:
  - { id: sim/a, provider: sim, price: { input: 1, output: 2 }, context_window: 10000, max_output_tokens: 1000 }
  - { id: paid/b, provider: paid, price: { input: 3, output: 4 }, context_window: 10000, max_output_tokens: 1000 }
aliases:
  svc/fast: { candidates: [paid/b, sim/a], reasoning: low }
  svc/balanced: { candidates: [${balanced}], reasoning: medium }
  svc/best: { candidates: [sim/a, paid/b], reasoning: xhigh }
`;
}

const ADDRESS = '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed';
const CHECKSUMMED = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const OTHER = '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359';
const OTHER_CHECKSUMMED = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';

describe('operator commands without provider secrets', () => {
  let folder = '';
  let database = '';
  let skipping = '';
  let refusing = '';
  const unset = { PAID_API_KEY: undefined, PAID_TEAM: undefined };

  before(async () => {
    folder = await folders.make();
    database = join(folder, 'gateway.db');
    skipping = join(folder, 'skipping.yaml');
    refusing = join(folder, 'refusing.yaml');
    await writeFile(skipping, configText('sim/a'));
    await writeFile(refusing, configText('paid/b'));
  });

  test('funds, keys and budget run with the provider key unset, even when start would refuse', async () => {
    for (const config of [skipping, refusing]) {
      assert.match(await succeedGateway(database, ['funds', 'show', '--config', config], unset), /^Balance: \$0\.00/);
    }
    const created = JSON.parse(
      await succeedGateway(database, ['keys', 'create', '--json', '--models', 'paid/b,svc/fast', '--config', refusing], unset),
    );
    assert.deepEqual(created.models, ['paid/b', 'svc/fast']);
    assert.match(await succeedGateway(database, ['budget', 'show', '--config', refusing], unset), /budget none/);
  });

  test('start skips a provider whose key is unset, with one warning, and --port/--host override the config', async () => {
    const { key } = JSON.parse(await succeedGateway(database, ['keys', 'create', '--json', '--config', skipping], unset));
    const gateway = await startGatewayProcess(database, ['--config', skipping, '--port', '0', '--host', '127.0.0.1'], unset);
    try {
      assert.notEqual(new URL(gateway.url).port, '1', '--port 0 over the config port 1');
      const response = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(response.status, 200);
      const ids = ((await response.json()) as { data: Array<{ id: string }> }).data.map((entry) => entry.id);
      assert.ok(ids.includes('sim/a') && ids.includes('svc/fast'), ids.join(','));
      assert.equal(ids.includes('paid/b'), false, ids.join(','));
      const warnings = gateway
        .output()
        .split('\n')
        .filter((line) => line.includes('skipped'));
      assert.equal(warnings.length, 1, gateway.output());
      assert.match(warnings[0]!, /provider paid skipped: PAID_API_KEY is not set/);
    } finally {
      await gateway.stop();
    }

    const withKey = await startGatewayProcess(database, ['--config', skipping, '--port', '0'], { PAID_API_KEY: 'sk-paid' });
    try {
      const response = await fetch(`${withKey.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      const ids = ((await response.json()) as { data: Array<{ id: string }> }).data.map((entry) => entry.id);
      assert.ok(ids.includes('paid/b'), 'served once its key is set');
      assert.doesNotMatch(withKey.output(), /skipped/);
    } finally {
      await withKey.stop();
    }
  });

  test("start refuses when the provider is an alias's only candidate, in one line", async () => {
    const outcome = await runGateway(database, ['start', '--config', refusing, '--port', '0'], unset);
    assert.equal(outcome.code, 1);
    assert.equal(
      outcome.stderr.trim(),
      `gateway: ${refusing}: alias svc/balanced has no candidate left: its only candidate is on a provider whose key is not set (paid/b needs PAID_API_KEY)`,
    );
    const badPort = await runGateway(database, ['start', '--config', skipping, '--port', 'eighty'], unset);
    assert.equal(badPort.code, 1);
    assert.match(badPort.stderr, /--port must be a port number from 0 to 65535; got "eighty"/);
  });

  test('check-config: what start would run with, exit 0; the errors, exit 2; no database opened', async () => {
    const nowhere = { ...unset, DATABASE_PATH: '/proc/no-such-place/gateway.db' };
    const text = await succeedGateway(database, ['check-config', '--config', skipping], nowhere);
    assert.match(text, /valid/);
    assert.match(text, /paid \(openai\): skipped at start, PAID_API_KEY not set/);
    assert.match(text, /svc\/fast: sim\/a \(skipped: paid\/b\)/);
    const json = JSON.parse(await succeedGateway(database, ['check-config', '--json', '--config', skipping], nowhere));
    assert.deepEqual(
      json.providers.map((provider: { id: string; skipped: boolean; unset_variables: string[] }) => [
        provider.id,
        provider.skipped,
        provider.unset_variables,
      ]),
      [
        ['sim', false, []],
        ['paid', true, ['PAID_API_KEY']],
      ],
    );
    assert.deepEqual(json.aliases[0], { name: 'svc/fast', candidates: ['sim/a'], skipped_candidates: ['paid/b'] });

    const refused = await runGateway(database, ['check-config', '--config', refusing], nowhere);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /alias svc\/balanced has no candidate left/);
    const broken = join(folder, 'broken.yaml');
    await writeFile(broken, configText('sim/a').replace('port: 1', 'port: -1'));
    const invalid = await runGateway(database, ['check-config', '--config', broken], nowhere);
    assert.equal(invalid.code, 2);
    assert.match(invalid.stderr, /is not a valid gateway config:\n\s+server\.port/);
  });

  test('members: add, list, remove with checksummed addresses; the owner stays', async () => {
    const members = join(folder, 'members.db');
    assert.match(await succeedGateway(members, ['members', 'list']), /No members yet/);
    assert.match(await succeedGateway(members, ['members', 'add', ADDRESS, '--role', 'owner']), new RegExp(`Added ${CHECKSUMMED} as the owner`));
    const added = JSON.parse(await succeedGateway(members, ['members', 'add', OTHER.toUpperCase().replace('0X', '0x'), '--json']));
    assert.deepEqual([added.address, added.role, added.added_by], [OTHER_CHECKSUMMED, 'member', 'cli']);
    const listed = JSON.parse(await succeedGateway(members, ['members', 'list', '--json']));
    assert.deepEqual(
      listed.map((member: { address: string; role: string }) => [member.address, member.role]),
      [
        [CHECKSUMMED, 'owner'],
        [OTHER_CHECKSUMMED, 'member'],
      ],
    );
    const owner = await runGateway(members, ['members', 'remove', ADDRESS]);
    assert.equal(owner.code, 1);
    assert.match(owner.stderr, /owns the workspace and cannot be removed/);
    const second = await runGateway(members, ['members', 'add', OTHER, '--role', 'owner']);
    assert.equal(second.code, 1);
    assert.match(second.stderr, /is a member; the CLI cannot make a member the owner/);
    assert.match(await succeedGateway(members, ['members', 'remove', OTHER]), new RegExp(`Removed ${OTHER_CHECKSUMMED}`));
    const again = await runGateway(members, ['members', 'remove', OTHER]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is not a member/);
    const bad = await runGateway(members, ['members', 'add', '0x123']);
    assert.match(bad.stderr, /"0x123" is not an address/);
    const role = await runGateway(members, ['members', 'add', OTHER, '--role', 'onwer']);
    assert.match(role.stderr, /--role must be member or owner; got "onwer" \(did you mean owner\?\)/);
  });
});
