import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import {
  concatHex,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  getContractAddress,
  http,
  padHex,
  publicActions,
  serializeErc6492Signature,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { buildSignInMessage } from './sign-in-message.ts';
import { SignInError, SignInVerifier, type SignInRefusal } from './sign-in-verifier.ts';
import { newSignInNonce } from './new-nonce.ts';
import { DEPLOYER_KEY, LOCAL_CHAIN_HARDFORK, startLocalChain, type LocalChain } from '../../../test/helpers/start-local-chain.ts';
import { compileTestWallet } from '../../../test/helpers/compile-test-wallet.ts';

const deployer = privateKeyToAccount(DEPLOYER_KEY);
const owner = privateKeyToAccount('0x3333333333333333333333333333333333333333333333333333333333333333');
const stranger = privateKeyToAccount('0x4444444444444444444444444444444444444444444444444444444444444444');
const DOMAIN = 'localhost:5173';
const ORIGIN = 'http://localhost:5173';

// The chain and solc must run here; when they cannot, CI fails and a developer's machine skips.
// Compile first: a chain started before a failing compile would keep the process alive.
const setup = await (async () => {
  const contracts = compileTestWallet(LOCAL_CHAIN_HARDFORK);
  return { contracts, chain: await startLocalChain() };
})().catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
const unavailable = setup instanceof Error ? `local chain or solc unavailable: ${setup.message}` : false;
if (unavailable && process.env.CI === 'true') throw new Error(`${unavailable} (CI=true, so this is a failure)`);
if (unavailable) console.warn(`SKIPPING contract-wallet sign-in tests: ${unavailable}`);

describe('SignInVerifier with contract wallets on a local ganache chain', { skip: unavailable }, () => {
  const { chain, contracts } = setup as { chain: LocalChain; contracts: ReturnType<typeof compileTestWallet> };
  let deployedWallet: Address;
  let factory: Address;
  let verifier: SignInVerifier;

  before(async () => {
    const client = createWalletClient({ account: deployer, transport: http(chain.url, { retryCount: 0 }) }).extend(publicActions);
    const deploy = async (bytecode: Hex, args: readonly unknown[]): Promise<Address> => {
      const abi = bytecode === contracts.wallet.bytecode ? contracts.wallet.abi : contracts.factory.abi;
      const hash = await client.deployContract({ abi, bytecode, args, chain: null });
      const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      assert.ok(receipt.contractAddress);
      return getAddress(receipt.contractAddress);
    };
    deployedWallet = await deploy(contracts.wallet.bytecode, [owner.address]);
    factory = await deploy(contracts.factory.bytecode, []);
    verifier = new SignInVerifier({ domain: DOMAIN, origin: ORIGIN, chainIds: [chain.chainId], rpcUrls: { [chain.chainId]: chain.url } });
  });

  after(async () => {
    await chain.stop();
  });

  /** One sign-in attempt for `address`, signed by `signer`, its signature optionally rewritten. */
  async function signIn(target: SignInVerifier, address: Address, signer = owner, wrap: (signature: Hex) => Hex = (s) => s) {
    const nonce = newSignInNonce();
    const message = buildSignInMessage({ domain: DOMAIN, origin: ORIGIN, address, chainId: chain.chainId, nonce, issuedAt: new Date() });
    const signature = wrap(await signer.signMessage({ message }));
    const consume = async (asked: string) => (asked === nonce ? address.toLowerCase() : null);
    return target.verify({ message, signature }, consume);
  }

  async function refusal(promise: Promise<unknown>): Promise<SignInRefusal> {
    const error = await promise.then(
      () => assert.fail('expected the sign-in to be refused'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof SignInError, String(error));
    return error.reason;
  }

  it("accepts the owner's signature for a deployed ERC-1271 wallet", async () => {
    const result = await signIn(verifier, deployedWallet);
    assert.deepEqual({ address: result.address, chainId: result.chainId }, { address: deployedWallet, chainId: chain.chainId });
  });

  it("refuses a stranger's signature for the wallet (bad_signature)", async () => {
    assert.equal(await refusal(signIn(verifier, deployedWallet, stranger)), 'bad_signature');
  });

  it("accepts an ERC-6492 signature for a wallet not deployed yet, and refuses a stranger's", async () => {
    const salt = padHex('0x6492', { size: 32 });
    const initCode = concatHex([contracts.wallet.bytecode, encodeAbiParameters([{ type: 'address' }], [owner.address])]);
    const counterfactual = getContractAddress({ opcode: 'CREATE2', from: factory, salt, bytecode: initCode });
    const data = encodeFunctionData({ abi: contracts.factory.abi, functionName: 'deploy', args: [owner.address, salt] });
    const wrap = (signature: Hex) => serializeErc6492Signature({ address: factory, data, signature });
    const result = await signIn(verifier, counterfactual, owner, wrap);
    assert.equal(result.address, counterfactual);
    assert.equal(await refusal(signIn(verifier, counterfactual, stranger, wrap)), 'bad_signature');
  });

  it('fails closed with rpc_unavailable, quickly, when the RPC is unreachable; an EOA still signs in', async () => {
    const deadUrl = `http://127.0.0.1:${await closedPort()}`;
    const offline = new SignInVerifier({ domain: DOMAIN, origin: ORIGIN, chainIds: [chain.chainId], rpcUrls: { [chain.chainId]: deadUrl } });
    const started = performance.now();
    assert.equal(await refusal(signIn(offline, deployedWallet)), 'rpc_unavailable');
    assert.ok(performance.now() - started < 2_000, 'a dead RPC must fail fast');
    const result = await signIn(offline, owner.address);
    assert.equal(result.address, owner.address);
  });

  it('refuses (rpc_unavailable) when the RPC configured for the chain serves another chain', async () => {
    const misconfigured = new SignInVerifier({ domain: DOMAIN, origin: ORIGIN, chainIds: [1], rpcUrls: { 1: chain.url } });
    const nonce = newSignInNonce();
    const message = buildSignInMessage({ domain: DOMAIN, origin: ORIGIN, address: deployedWallet, chainId: 1, nonce, issuedAt: new Date() });
    const signature = await owner.signMessage({ message });
    const error = await misconfigured.verify({ message, signature }, async () => deployedWallet.toLowerCase()).catch((caught: unknown) => caught);
    assert.ok(error instanceof SignInError);
    assert.equal(error.reason, 'rpc_unavailable');
    assert.match(error.message, /serves chain 31337/);
  });
});

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
