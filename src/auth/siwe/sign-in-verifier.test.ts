import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { buildSignInMessage, SIGN_IN_STATEMENT } from './sign-in-message.ts';
import { SignInError, SignInVerifier, type SignInRefusal, type SignInSettings } from './sign-in-verifier.ts';
import { newSignInNonce } from './new-nonce.ts';

const alice = privateKeyToAccount('0x1111111111111111111111111111111111111111111111111111111111111111');
const mallory = privateKeyToAccount('0x2222222222222222222222222222222222222222222222222222222222222222');
const NOW = Date.parse('2030-01-01T12:00:00.000Z');
const settings: SignInSettings = { domain: 'console.example.com:8443', origin: 'https://console.example.com:8443', chainIds: [1, 8453], rpcUrls: {} };
const verifier = new SignInVerifier(settings, () => NOW);

/** An in-memory nonce store: each nonce is issued for one address and can be consumed once. */
function fakeNonces() {
  const issued = new Map<string, string>();
  return {
    issue(address: string): string {
      const nonce = newSignInNonce();
      issued.set(nonce, address.toLowerCase());
      return nonce;
    },
    consume: async (nonce: string): Promise<string | null> => {
      const address = issued.get(nonce) ?? null;
      issued.delete(nonce);
      return address;
    },
  };
}

function message(nonce: string, overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {}): string {
  const issuedAt = overrides.issuedAt ?? new Date(NOW - 30_000);
  return createSiweMessage({
    domain: settings.domain,
    address: alice.address,
    statement: SIGN_IN_STATEMENT,
    uri: settings.origin,
    version: '1',
    chainId: 1,
    nonce,
    issuedAt,
    expirationTime: new Date(issuedAt.getTime() + 10 * 60_000),
    ...overrides,
  });
}

async function refusal(promise: Promise<unknown>): Promise<SignInRefusal> {
  const error = await promise.then(
    () => assert.fail('expected the sign-in to be refused'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof SignInError, `expected a SignInError, got ${String(error)}`);
  assert.ok(error.message.length > 10);
  return error.reason;
}

/** Signs `text` with `signer` (alice by default) and verifies it with a fresh nonce store holding `nonce` for alice. */
async function attempt(build: (nonce: string) => string, signer = alice) {
  const nonces = fakeNonces();
  const nonce = nonces.issue(alice.address);
  const text = build(nonce);
  const signature = await signer.signMessage({ message: text });
  return verifier.verify({ message: text, signature }, nonces.consume);
}

describe('SignInVerifier with EOA signatures (no RPC)', () => {
  it('accepts a message built by buildSignInMessage and returns the checksummed address', async () => {
    const result = await attempt((nonce) =>
      buildSignInMessage({
        domain: settings.domain,
        origin: settings.origin,
        address: alice.address.toLowerCase(),
        chainId: 8453,
        nonce,
        issuedAt: new Date(NOW),
      }),
    );
    assert.deepEqual(result, { address: alice.address, chainId: 8453, nonce: result.nonce });
    assert.match(result.nonce, /^[a-zA-Z0-9]{17,}$/);
  });

  it('accepts a URI under the origin and an Issued At up to 60 s ahead', async () => {
    await attempt((nonce) => message(nonce, { uri: `${settings.origin}/login?next=%2F` }));
    await attempt((nonce) => message(nonce, { issuedAt: new Date(NOW + 59_000) }));
  });

  it('refuses a lower-case address in the message (EIP-4361 requires EIP-55) as malformed', async () => {
    const reason = await refusal(attempt((nonce) => message(nonce).replace(alice.address, alice.address.toLowerCase())));
    assert.equal(reason, 'malformed');
  });

  const refusals: Array<[string, SignInRefusal, (nonce: string) => string]> = [
    ['another domain', 'wrong_domain', (nonce) => message(nonce, { domain: 'console.example.org:8443' })],
    ['the right host on another port', 'wrong_domain', (nonce) => message(nonce, { domain: 'console.example.com:8444' })],
    ['the right host without its port', 'wrong_domain', (nonce) => message(nonce, { domain: 'console.example.com' })],
    [
      'a message built for a spoofed Host header',
      'wrong_domain',
      (nonce) =>
        buildSignInMessage({
          domain: 'evil.example',
          origin: 'https://evil.example',
          address: alice.address,
          chainId: 1,
          nonce,
          issuedAt: new Date(NOW),
        }),
    ],
    ["a scheme other than the origin's", 'wrong_domain', (nonce) => message(nonce, { scheme: 'http' })],
    ['another URI', 'wrong_uri', (nonce) => message(nonce, { uri: 'https://evil.example/login' })],
    ['the origin over http', 'wrong_uri', (nonce) => message(nonce, { uri: 'http://console.example.com:8443' })],
    ['a chain not configured', 'wrong_chain', (nonce) => message(nonce, { chainId: 137 })],
    ['an expired message', 'expired', (nonce) => message(nonce, { issuedAt: new Date(NOW - 11 * 60_000) })],
    ['validity over 10 minutes', 'too_long', (nonce) => message(nonce, { expirationTime: new Date(NOW + 10 * 60_000) })],
    ['no Expiration Time', 'malformed', (nonce) => message(nonce, { expirationTime: undefined })],
    ['Issued At in the future', 'issued_in_future', (nonce) => message(nonce, { issuedAt: new Date(NOW + 61_000) })],
    ['Not Before in the future', 'not_yet_valid', (nonce) => message(nonce, { notBefore: new Date(NOW + 60_000) })],
    ['trailing text after the fields', 'malformed', (nonce) => `${message(nonce)}\nURI: https://evil.example`],
    ['Windows line endings', 'malformed', (nonce) => message(nonce).replaceAll('\n', '\r\n')],
    ['a non-ISO Issued At', 'malformed', (nonce) => message(nonce).replace(/Issued At: (.*)\.000Z/, 'Issued At: $1Z')],
  ];
  for (const [name, reason, build] of refusals) {
    it(`refuses ${name} (${reason})`, async () => {
      assert.equal(await refusal(attempt(build)), reason);
    });
  }

  it('refuses a replayed nonce, even after a failed attempt', async () => {
    const nonces = fakeNonces();
    const text = message(nonces.issue(alice.address));
    const signature = await alice.signMessage({ message: text });
    await verifier.verify({ message: text, signature }, nonces.consume);
    assert.equal(await refusal(verifier.verify({ message: text, signature }, nonces.consume)), 'unknown_nonce');

    const failing = message(nonces.issue(alice.address));
    const wrong = await mallory.signMessage({ message: failing });
    assert.equal(await refusal(verifier.verify({ message: failing, signature: wrong }, nonces.consume)), 'bad_signature');
    const right = await alice.signMessage({ message: failing });
    assert.equal(await refusal(verifier.verify({ message: failing, signature: right }, nonces.consume)), 'unknown_nonce');
  });

  it('refuses a nonce the server never issued', async () => {
    const text = message(newSignInNonce());
    const signature = await alice.signMessage({ message: text });
    assert.equal(await refusal(verifier.verify({ message: text, signature }, fakeNonces().consume)), 'unknown_nonce');
  });

  it('refuses a nonce issued for another address', async () => {
    const nonces = fakeNonces();
    const text = message(nonces.issue(mallory.address));
    const signature = await alice.signMessage({ message: text });
    assert.equal(await refusal(verifier.verify({ message: text, signature }, nonces.consume)), 'unknown_nonce');
  });

  it('refuses a signature by another key (bad_signature)', async () => {
    assert.equal(await refusal(attempt((nonce) => message(nonce), mallory)), 'bad_signature');
  });

  it('refuses a message with one character of the statement changed after signing', async () => {
    const nonces = fakeNonces();
    const text = message(nonces.issue(alice.address));
    const signature = await alice.signMessage({ message: text });
    const tampered = text.replace('costs no gas', 'costs no gaz');
    assert.notEqual(tampered, text);
    assert.equal(await refusal(verifier.verify({ message: tampered, signature }, nonces.consume)), 'bad_signature');
  });

  it('refuses malformed text and signatures without consuming a nonce', async () => {
    let consumed = 0;
    const consume = async () => {
      consumed += 1;
      return alice.address.toLowerCase();
    };
    const signature = await alice.signMessage({ message: 'hello' });
    for (const text of ['', 'hello', 'example.com wants you to sign in with your Ethereum account:\n0x123\n\nURI: x', 'x'.repeat(5_000)]) {
      assert.equal(await refusal(verifier.verify({ message: text, signature }, consume)), 'malformed');
    }
    const text = message(newSignInNonce());
    for (const bad of ['', '0x', 'not hex', `0x${'zz'.repeat(65)}`, `0x${'ab'.repeat(9_000)}`]) {
      assert.equal(await refusal(verifier.verify({ message: text, signature: bad }, consume)), 'malformed');
    }
    assert.equal(consumed, 0);
  });

  it('checks in the documented order: domain before chain before time before nonce', async () => {
    let consumed = 0;
    const consume = async () => {
      consumed += 1;
      return null;
    };
    const text = message(newSignInNonce(), { domain: 'evil.example', chainId: 137, issuedAt: new Date(NOW - 3_600_000) });
    assert.equal(await refusal(verifier.verify({ message: text, signature: '0x00' }, consume)), 'wrong_domain');
    const late = message(newSignInNonce(), { chainId: 137, issuedAt: new Date(NOW - 3_600_000) });
    assert.equal(await refusal(verifier.verify({ message: late, signature: '0x00' }, consume)), 'wrong_chain');
    const expired = message(newSignInNonce(), { issuedAt: new Date(NOW - 3_600_000) });
    assert.equal(await refusal(verifier.verify({ message: expired, signature: '0x00' }, consume)), 'expired');
    assert.equal(consumed, 0);
  });
});

describe('SignInVerifier settings', () => {
  const bad: Array<[string, Partial<SignInSettings>, RegExp]> = [
    ['a domain with a scheme', { domain: 'https://console.example.com' }, /"domain"/],
    ['an upper-case domain', { domain: 'Console.example.com' }, /"domain"/],
    ['a domain with a path', { domain: 'console.example.com/login' }, /"domain"/],
    ['an origin that is not a URL', { origin: 'console.example.com' }, /"origin"/],
    ['an origin with a path', { origin: 'https://console.example.com/app' }, /"origin"/],
    ['an origin over ftp', { origin: 'ftp://console.example.com' }, /"origin"/],
    ['no chain ids', { chainIds: [] }, /"chainIds"/],
    ['a chain id of zero', { chainIds: [0] }, /"chainIds"/],
    ['a fractional chain id', { chainIds: [1.5] }, /"chainIds"/],
    ['an rpc url that is not http(s)', { rpcUrls: { 1: 'ws://127.0.0.1:8545' } }, /"rpcUrls\.1"/],
    ['an rpc url for a chain not configured', { rpcUrls: { 5: 'http://127.0.0.1:8545' } }, /"rpcUrls\.5"/],
  ];
  for (const [name, override, pattern] of bad) {
    it(`refuses ${name}`, () => {
      assert.throws(() => new SignInVerifier({ ...settings, ...override }), pattern);
    });
  }

  it('accepts localhost, an IPv4 address and an origin with a trailing slash', () => {
    new SignInVerifier({
      domain: 'localhost:5173',
      origin: 'http://localhost:5173/',
      chainIds: [31337],
      rpcUrls: { 31337: 'http://127.0.0.1:8545' },
    });
    new SignInVerifier({ domain: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080', chainIds: [1], rpcUrls: {} });
  });
});
