import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { connectTestRedis, reportRedisUnreachable } from '../../test/helpers/redis-test-connection.ts';
import { createSqliteStore } from '../storage/sqlite/sqlite-store.ts';
import { redisSignInNonces } from './redis-sign-in-nonces.ts';
import { storeSignInNonces, type SignInNonces } from './sign-in-nonces.ts';

const ADDRESS = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01';

function nonceContract(name: string, make: () => Promise<SignInNonces>) {
  describe(`sign-in nonces: ${name}`, () => {
    test('a nonce is bound to its address, lower-case, and taken once', async () => {
      const nonces = await make();
      const now = Date.now();
      const issued = await nonces.issue(ADDRESS, now);
      assert.match(issued.nonce, /^[a-zA-Z0-9]{17,}$/);
      assert.equal(issued.expiresAt.getTime() - issued.issuedAt.getTime(), 10 * 60_000);
      assert.equal(await nonces.consume(issued.nonce, now + 1_000), ADDRESS.toLowerCase());
      assert.equal(await nonces.consume(issued.nonce, now + 1_000), null, 'single use');
      assert.equal(await nonces.consume('neverIssued123456789', now), null);
    });

    test('two consumers racing for one nonce: exactly one gets it', async () => {
      const nonces = await make();
      const now = Date.now();
      for (let round = 0; round < 5; round++) {
        const { nonce } = await nonces.issue(ADDRESS, now);
        const results = await Promise.all(Array.from({ length: 6 }, () => nonces.consume(nonce, now)));
        assert.equal(results.filter((result) => result !== null).length, 1);
      }
    });
  });
}

const store = createSqliteStore(':memory:');
await store.migrate();
after(() => store.close());
nonceContract('database', async () => storeSignInNonces(store));

test('sign-in nonces in the database expire after 10 minutes', async () => {
  const nonces = storeSignInNonces(store);
  const now = Date.now();
  const { nonce } = await nonces.issue(ADDRESS, now);
  assert.equal(await nonces.consume(nonce, now + 10 * 60_000 + 1), null);
});

const redis = await connectTestRedis();
if ('unreachable' in redis) reportRedisUnreachable('sign-in nonces: Redis', redis.unreachable);
else {
  after(() => redis.quit());
  nonceContract('Redis', async () => redisSignInNonces(redis));
  test('sign-in nonces in Redis carry a 10-minute expiry', async () => {
    const { nonce } = await redisSignInNonces(redis).issue(ADDRESS, Date.now());
    const ttl = await redis.pttl(`svc:siwe:nonce:${nonce}`);
    assert.ok(ttl > 9 * 60_000 && ttl <= 10 * 60_000, String(ttl));
    await redis.del(`svc:siwe:nonce:${nonce}`);
  });
}
