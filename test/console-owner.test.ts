import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { consoleClient, json } from './helpers/console-client.ts';
import { startHarness } from './helpers/gateway-harness.ts';

const owner = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const stranger = privateKeyToAccount('0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6');

/** Signs in with a real signature; the response status and body. */
async function signIn(client: ReturnType<typeof consoleClient>, account: typeof owner) {
  const { message } = await client.nonce(account.address);
  const response = await client.signInWith(message, await account.signMessage({ message }));
  return { status: response.status, body: await json(response) };
}

describe('console.owner', () => {
  test('with console.owner, an address signing in first is refused and the configured one owns the workspace', async () => {
    const harness = await startHarness({ editConfig: (text) => `${text}console: { owner: "${owner.address.toLowerCase()}" }\n` });
    try {
      const client = consoleClient(harness.gateway.url);
      const first = await signIn(client, stranger);
      assert.deepEqual([first.status, first.body.error.code], [403, 'not_a_member']);
      const claimed = await signIn(client, owner);
      assert.deepEqual([claimed.status, claimed.body.address, claimed.body.role], [200, owner.address, 'owner']);
      const members = await harness.gateway.deps.store.listMembers('default');
      assert.deepEqual(
        members.map((member) => [member.address, member.role]),
        [[owner.address.toLowerCase(), 'owner']],
      );
    } finally {
      await harness.close();
    }
  });

  test('without it, the first address to sign in owns the workspace', async () => {
    const harness = await startHarness();
    try {
      const client = consoleClient(harness.gateway.url);
      const first = await signIn(client, stranger);
      assert.deepEqual([first.status, first.body.role], [200, 'owner']);
      const second = await signIn(client, owner);
      assert.deepEqual([second.status, second.body.error.code], [403, 'not_a_member']);
    } finally {
      await harness.close();
    }
  });
});
