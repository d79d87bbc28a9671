import ganache from 'ganache';

// A fixed, funded deployer for test contracts (anvil's and hardhat's well-known first key).
export const DEPLOYER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
/** Ganache 7 runs hardforks up to shanghai; test contracts must be compiled for it. */
export const LOCAL_CHAIN_HARDFORK = 'shanghai';

export interface LocalChain {
  url: string;
  chainId: number;
  stop(): Promise<void>;
}

/**
 * Starts a ganache chain in this process, serving JSON-RPC over HTTP on a free loopback port.
 * Ganache is pure JS from npm (no binary, no install script), so `npm ci` alone provides it;
 * stopping it leaves nothing running.
 */
export async function startLocalChain(chainId = 31337): Promise<LocalChain> {
  const server = ganache.server({
    logging: { quiet: true },
    chain: { chainId, hardfork: LOCAL_CHAIN_HARDFORK },
    wallet: { accounts: [{ secretKey: DEPLOYER_KEY, balance: '0x56bc75e2d63100000' }] },
  });
  await server.listen(0, '127.0.0.1');
  const address = server.address();
  return {
    url: `http://127.0.0.1:${address.port}`,
    chainId,
    stop: () => server.close(),
  };
}
