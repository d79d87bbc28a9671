import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createRedisHoldJournal } from './redis-hold-journal.ts';
import { withTestRedis } from '../../../test/helpers/redis-test-connection.ts';

await withTestRedis('redis hold journal', (redis, prefix) => {
  describe('redis hold journal', () => {
    test('entries per owner and scope: put, replace, remove, list owners, drop an owner only when empty', async () => {
      const journal = createRedisHoldJournal(redis, { prefix });
      assert.equal(journal.available(), true);
      await journal.put(
        'ledger-a',
        'host/1/a',
        new Map([
          ['rcpt_1', '{"n":1}'],
          ['rcpt_2', '{"n":2}'],
        ]),
      );
      await journal.put('ledger-a', 'host/1/a', new Map([['rcpt_2', '{"n":22}']]));
      await journal.put('ledger-a', 'host/2/b', new Map([['rcpt_3', '{"n":3}']]));
      await journal.put('ledger-b', 'host/9/z', new Map([['rcpt_9', '{}']]));
      assert.deepEqual([...(await journal.entries('ledger-a', 'host/1/a'))].sort(), [
        ['rcpt_1', '{"n":1}'],
        ['rcpt_2', '{"n":22}'],
      ]);
      assert.deepEqual((await journal.owners('ledger-a')).sort(), ['host/1/a', 'host/2/b']);

      await journal.dropOwner('ledger-a', 'host/2/b');
      assert.deepEqual((await journal.owners('ledger-a')).sort(), ['host/1/a', 'host/2/b'], 'an owner with entries stays');
      await journal.remove('ledger-a', 'host/2/b', ['rcpt_3']);
      await journal.dropOwner('ledger-a', 'host/2/b');
      assert.deepEqual(await journal.owners('ledger-a'), ['host/1/a']);
      assert.deepEqual(await journal.entries('ledger-a', 'host/2/b'), new Map());
      assert.deepEqual(await journal.owners('ledger-b'), ['host/9/z'], 'another ledger is apart');
    });
  });
});
