import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildSignInMessage, SIGN_IN_STATEMENT, SIGN_IN_VALIDITY_MS } from './sign-in-message.ts';

describe('buildSignInMessage', () => {
  it("writes exactly the contract's lines, in order, with a checksummed address", () => {
    const text = buildSignInMessage({
      domain: 'localhost:5173',
      origin: 'http://localhost:5173',
      address: '0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a',
      chainId: 8453,
      nonce: 'abcdef0123456789abcdef',
      issuedAt: new Date('2030-01-01T12:00:00.000Z'),
    });
    assert.equal(
      text,
      [
        'localhost:5173 wants you to sign in with your Ethereum account:',
        '0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A',
        '',
        SIGN_IN_STATEMENT,
        '',
        'URI: http://localhost:5173',
        'Version: 1',
        'Chain ID: 8453',
        'Nonce: abcdef0123456789abcdef',
        'Issued At: 2030-01-01T12:00:00.000Z',
        'Expiration Time: 2030-01-01T12:10:00.000Z',
      ].join('\n'),
    );
    assert.equal(SIGN_IN_VALIDITY_MS, 600_000);
  });

  it('refuses an address that is not one', () => {
    assert.throws(
      () =>
        buildSignInMessage({
          domain: 'localhost',
          origin: 'http://localhost',
          address: '0x123',
          chainId: 1,
          nonce: 'abcdefgh1',
          issuedAt: new Date(),
        }),
      /address/,
    );
  });
});
