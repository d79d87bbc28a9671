import assert from 'node:assert/strict';
import type { AliasRule } from '../storage/records.ts';
import { describe, test } from 'node:test';
import { describeConsoleReportsContract } from './console-reports-contract.ts';
import { DAY, MEMBER, OWNER, racingAddress, rule, sampleNonce, sampleSession, STRANGER } from './console-samples.ts';
import { OTHER_ACCOUNT, sampleKey, storeRunner } from './store-samples.ts';

export { racingAddress, sampleNonce, sampleSession } from './console-samples.ts';
import { DEFAULT_ACCOUNT_ID, type Store } from '../storage/store.ts';

/** The console's storage every Store backend must show: audit, key limits, receipt search, spend, members, sessions, nonces, rules. */
export function runConsoleStoreContract(name: string, makeStore: () => Promise<Store>): void {
  const run = storeRunner(makeStore);
  const actions = async (store: Store) => (await store.listAudit(DEFAULT_ACCOUNT_ID, 100)).map((entry) => [entry.action, entry.actor]);

  describe(`Console store contract: ${name}`, () => {
    describeConsoleReportsContract(run);

    test('claimMembership: the first address owns the account, others are refused, members get their membership', () =>
      run(async (store) => {
        const at = `${DAY}T10:00:00.000Z`;
        const owner = await store.claimMembership(DEFAULT_ACCOUNT_ID, OWNER.toUpperCase().replace('0X', '0x'), at);
        assert.deepEqual(owner, { accountId: DEFAULT_ACCOUNT_ID, address: OWNER, role: 'owner', addedAt: at, addedBy: 'sign-in' });
        assert.equal(await store.claimMembership(DEFAULT_ACCOUNT_ID, STRANGER, `${DAY}T10:01:00.000Z`), null);
        assert.deepEqual(await store.claimMembership(DEFAULT_ACCOUNT_ID, OWNER, `${DAY}T11:00:00.000Z`), owner, 'unchanged on a later sign-in');
        await store.addMember(DEFAULT_ACCOUNT_ID, MEMBER, OWNER, `${DAY}T10:05:00.000Z`);
        assert.equal((await store.claimMembership(DEFAULT_ACCOUNT_ID, MEMBER, `${DAY}T12:00:00.000Z`))?.role, 'member');
        assert.deepEqual(await actions(store), [
          ['member.added', OWNER],
          ['member.owner', OWNER],
        ]);
        assert.deepEqual((await store.listAudit(DEFAULT_ACCOUNT_ID, 100)).at(-1)?.detail, { address: OWNER });
        // Each account has its own owner.
        assert.equal((await store.claimMembership(OTHER_ACCOUNT, STRANGER, at))?.role, 'owner');
      }));

    test('claimMembership: first sign-ins racing make exactly one owner', () =>
      run(async (store) => {
        const claims = await Promise.all(
          Array.from({ length: 16 }, (_, index) => store.claimMembership(DEFAULT_ACCOUNT_ID, racingAddress(index), `${DAY}T10:00:00.000Z`)),
        );
        const owners = claims.filter((claim) => claim !== null);
        assert.equal(owners.length, 1);
        assert.equal(owners[0]!.role, 'owner');
        assert.deepEqual(
          (await store.listMembers(DEFAULT_ACCOUNT_ID)).map((member) => member.address),
          [owners[0]!.address],
        );
        assert.deepEqual(await actions(store), [['member.owner', owners[0]!.address]]);
      }));

    test('members: owner first then by when added; add is idempotent; the owner is never removed', () =>
      run(async (store) => {
        await store.claimMembership(DEFAULT_ACCOUNT_ID, OWNER, `${DAY}T10:00:00.000Z`);
        const later = await store.addMember(DEFAULT_ACCOUNT_ID, STRANGER, OWNER, `${DAY}T10:09:00.000Z`);
        const member = await store.addMember(DEFAULT_ACCOUNT_ID, MEMBER.toUpperCase().replace('0X', '0x'), 'cli', `${DAY}T10:05:00.000Z`);
        assert.deepEqual(member, { accountId: DEFAULT_ACCOUNT_ID, address: MEMBER, role: 'member', addedAt: `${DAY}T10:05:00.000Z`, addedBy: 'cli' });
        assert.deepEqual(await store.addMember(DEFAULT_ACCOUNT_ID, MEMBER, OWNER, `${DAY}T11:00:00.000Z`), member, 'existing one unchanged');
        assert.deepEqual((await store.addMember(DEFAULT_ACCOUNT_ID, OWNER, OWNER, `${DAY}T11:00:00.000Z`)).role, 'owner');
        assert.deepEqual(
          (await store.listMembers(DEFAULT_ACCOUNT_ID)).map((entry) => [entry.address, entry.role]),
          [
            [OWNER, 'owner'],
            [MEMBER, 'member'],
            [STRANGER, 'member'],
          ],
        );
        assert.deepEqual(later.addedBy, OWNER);
        assert.deepEqual(await store.listMembers(OTHER_ACCOUNT), []);

        assert.equal(await store.removeMember(DEFAULT_ACCOUNT_ID, OWNER, OWNER, `${DAY}T12:00:00.000Z`), false);
        assert.equal(
          await store.removeMember(DEFAULT_ACCOUNT_ID, '0xdddd000000000000000000000000000000000004', OWNER, `${DAY}T12:00:00.000Z`),
          false,
        );
        assert.equal((await store.listMembers(DEFAULT_ACCOUNT_ID)).length, 3);
        assert.deepEqual(await actions(store), [
          ['member.added', 'cli'],
          ['member.added', OWNER],
          ['member.owner', OWNER],
        ]);
      }));

    test('removing a member ends its open sessions, and only its own; audited', () =>
      run(async (store) => {
        await store.claimMembership(DEFAULT_ACCOUNT_ID, OWNER, `${DAY}T10:00:00.000Z`);
        await store.addMember(DEFAULT_ACCOUNT_ID, MEMBER, OWNER, `${DAY}T10:01:00.000Z`);
        await store.insertSession(sampleSession({ id: 'sess_1' }));
        await store.insertSession(sampleSession({ id: 'sess_2' }));
        await store.insertSession(sampleSession({ id: 'sess_old', endedAt: `${DAY}T10:30:00.000Z` }));
        await store.insertSession(sampleSession({ id: 'sess_owner', address: OWNER }));
        const at = `${DAY}T11:00:00.000Z`;
        assert.equal(await store.removeMember(DEFAULT_ACCOUNT_ID, MEMBER.toUpperCase().replace('0X', '0x'), OWNER, at), true);
        assert.equal(await store.removeMember(DEFAULT_ACCOUNT_ID, MEMBER, OWNER, at), false, 'not a member any more');
        assert.equal(await store.claimMembership(DEFAULT_ACCOUNT_ID, MEMBER, at), null);
        assert.deepEqual(
          (await store.listMembers(DEFAULT_ACCOUNT_ID)).map((entry) => entry.address),
          [OWNER],
        );
        assert.equal((await store.findSession('hash-of-sess_1'))?.endedAt, at);
        assert.equal((await store.findSession('hash-of-sess_2'))?.endedAt, at);
        assert.equal((await store.findSession('hash-of-sess_old'))?.endedAt, `${DAY}T10:30:00.000Z`, 'an ended session keeps its end');
        assert.equal((await store.findSession('hash-of-sess_owner'))?.endedAt, null);
        const [entry] = await store.listAudit(DEFAULT_ACCOUNT_ID, 1);
        assert.deepEqual(
          [entry?.action, entry?.actor, entry?.at, entry?.detail],
          ['member.removed', OWNER, at, { address: MEMBER, sessionsEnded: 2 }],
        );
      }));

    test('sessions: found by token hash ended or not; endSession once; endSessionsOf counts the open ones', () =>
      run(async (store) => {
        const session = sampleSession({ address: MEMBER.toUpperCase().replace('0X', '0x') });
        await store.insertSession(session);
        assert.deepEqual(await store.findSession(session.tokenHash), { ...session, address: MEMBER });
        assert.equal(await store.findSession('no-such-hash'), null);
        await assert.rejects(store.insertSession(sampleSession({ id: 'sess_dup', tokenHash: session.tokenHash })));

        await store.endSession(session.tokenHash, `${DAY}T11:00:00.000Z`);
        await store.endSession(session.tokenHash, `${DAY}T12:00:00.000Z`);
        await store.endSession('no-such-hash', `${DAY}T12:00:00.000Z`);
        assert.equal((await store.findSession(session.tokenHash))?.endedAt, `${DAY}T11:00:00.000Z`);

        await store.insertKey(sampleKey({ id: 'key_other', hash: 'hash-other', accountId: OTHER_ACCOUNT }));
        for (const id of ['sess_a', 'sess_b', 'sess_c']) await store.insertSession(sampleSession({ id }));
        await store.insertSession(sampleSession({ id: 'sess_owner', address: OWNER }));
        await store.insertSession(sampleSession({ id: 'sess_elsewhere', accountId: OTHER_ACCOUNT }));
        assert.equal(await store.endSessionsOf(DEFAULT_ACCOUNT_ID, MEMBER, `${DAY}T13:00:00.000Z`), 3);
        assert.equal(await store.endSessionsOf(DEFAULT_ACCOUNT_ID, MEMBER, `${DAY}T14:00:00.000Z`), 0);
        assert.equal((await store.findSession('hash-of-sess_b'))?.endedAt, `${DAY}T13:00:00.000Z`);
        assert.equal((await store.findSession('hash-of-sess_owner'))?.endedAt, null);
        assert.equal((await store.findSession('hash-of-sess_elsewhere'))?.endedAt, null);
      }));

    test('sign-in nonces: consumed once, refused when expired, one of racing consumers gets it', () =>
      run(async (store) => {
        const nonce = sampleNonce();
        await store.insertSignInNonce(nonce);
        await assert.rejects(store.insertSignInNonce(nonce), 'a nonce is unique');
        assert.deepEqual(await store.consumeSignInNonce(nonce.nonce, `${DAY}T10:09:59.999Z`), nonce);
        assert.equal(await store.consumeSignInNonce(nonce.nonce, `${DAY}T10:09:59.999Z`), null);
        assert.equal(await store.consumeSignInNonce('nonce_unknown', `${DAY}T10:00:00.000Z`), null);

        await store.insertSignInNonce(sampleNonce({ nonce: 'nonce_expired' }));
        assert.equal(await store.consumeSignInNonce('nonce_expired', `${DAY}T10:10:00.000Z`), null, 'at its expiry it is gone');
        assert.equal(await store.consumeSignInNonce('nonce_expired', `${DAY}T10:00:00.000Z`), null, 'and never comes back');

        await store.insertSignInNonce(sampleNonce({ nonce: 'nonce_raced', address: OWNER.toUpperCase().replace('0X', '0x') }));
        const takes = await Promise.all(Array.from({ length: 8 }, () => store.consumeSignInNonce('nonce_raced', `${DAY}T10:05:00.000Z`)));
        assert.deepEqual(
          takes.filter((take) => take !== null),
          [sampleNonce({ nonce: 'nonce_raced' })],
        );
      }));

    test('alias rules: upserted per alias and account, listed, audited as rules.set by their author', () =>
      run(async (store) => {
        assert.deepEqual(await store.listAliasRules(DEFAULT_ACCOUNT_ID), []);
        await store.setAliasRule(DEFAULT_ACCOUNT_ID, rule());
        await store.setAliasRule(DEFAULT_ACCOUNT_ID, rule({ alias: 'svc/best', candidates: ['sim/sage'], reasoning: 'xhigh' }));
        const replaced = rule({ candidates: ['sim/steady'], reasoning: 'medium', updatedAt: `${DAY}T11:00:00.000Z`, updatedBy: MEMBER });
        await store.setAliasRule(DEFAULT_ACCOUNT_ID, replaced);
        await store.setAliasRule(OTHER_ACCOUNT, rule({ alias: 'svc/balanced' }));
        assert.deepEqual(await store.listAliasRules(DEFAULT_ACCOUNT_ID), [
          rule({ alias: 'svc/best', candidates: ['sim/sage'], reasoning: 'xhigh' }),
          replaced,
        ]);
        assert.deepEqual(
          (await store.listAliasRules(OTHER_ACCOUNT)).map((entry) => entry.alias),
          ['svc/balanced'],
        );
        const [entry] = await store.listAudit(DEFAULT_ACCOUNT_ID, 1);
        assert.deepEqual(
          [entry?.action, entry?.actor, entry?.at, entry?.detail],
          ['rules.set', MEMBER, `${DAY}T11:00:00.000Z`, { alias: 'svc/fast', candidates: ['sim/steady'], reasoning: 'medium' }],
        );
        await assert.rejects(store.setAliasRule(DEFAULT_ACCOUNT_ID, rule({ reasoning: 'extreme' as AliasRule['reasoning'] })));
        assert.equal((await store.listAudit(DEFAULT_ACCOUNT_ID, 100)).length, 3, 'a refused rule writes no audit entry');
      }));

    test('listAudit pages newest first with beforeId, per account', () =>
      run(async (store) => {
        for (let index = 0; index < 7; index++) {
          await store.appendAudit({
            accountId: DEFAULT_ACCOUNT_ID,
            at: `${DAY}T10:00:0${index}.000Z`,
            actor: 'cli',
            action: `test.${index}`,
            detail: { index },
          });
        }
        await store.appendAudit({ accountId: OTHER_ACCOUNT, at: `${DAY}T10:00:00.000Z`, actor: 'cli', action: 'test.other', detail: {} });
        const seen: string[] = [];
        let beforeId: number | undefined;
        for (;;) {
          const page = await store.listAudit(DEFAULT_ACCOUNT_ID, 3, beforeId);
          if (page.length === 0) break;
          seen.push(...page.map((entry) => entry.action));
          beforeId = page.at(-1)!.id;
        }
        assert.deepEqual(seen, ['test.6', 'test.5', 'test.4', 'test.3', 'test.2', 'test.1', 'test.0']);
        assert.deepEqual(
          (await store.listAudit(OTHER_ACCOUNT, 10)).map((entry) => entry.action),
          ['test.other'],
        );
      }));
  });
}
