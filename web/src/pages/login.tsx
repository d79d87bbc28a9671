import { useEffect, useState } from 'preact/hooks';
import type { SessionInfo } from '../api.ts';
import { api } from '../api.ts';
import { chainName, signInWith, switchChain, walletStore, WrongChainError, type Wallet } from '../wallets.ts';

/** /login: every EIP-6963 wallet of the browser, and sign-in with the one picked. */
export function LoginPage({ onSignedIn, notice }: { onSignedIn: (session: SessionInfo) => void; notice: string | null }) {
  const [wallets, setWallets] = useState<readonly Wallet[]>(walletStore.getProviders());
  const [looked, setLooked] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [wrongChain, setWrongChain] = useState<{ wallet: Wallet; accepted: number[] } | null>(null);

  useEffect(() => {
    const unsubscribe = walletStore.subscribe((found) => setWallets([...found]), { emitImmediately: true });
    // Wallets answer the discovery request at once; after a moment, "none" is the answer.
    const timer = setTimeout(() => setLooked(true), 600);
    return () => {
      unsubscribe();
      clearTimeout(timer);
    };
  }, []);

  const pick = async (wallet: Wallet) => {
    setBusy(wallet.info.uuid);
    setError(null);
    setWrongChain(null);
    try {
      onSignedIn(await signInWith(wallet));
    } catch (caught) {
      setError((caught as Error).message);
      if (caught instanceof WrongChainError) {
        const options = await api<{ chain_ids: number[] }>('GET', '/sign-in/options').catch(() => ({ chain_ids: [] }));
        if (options.chain_ids.length) setWrongChain({ wallet, accepted: options.chain_ids });
      }
    } finally {
      setBusy(null);
    }
  };

  return (
    <main id="main" class="login">
      <h1>Sign in to the console</h1>
      <p>
        Sign in with your Ethereum wallet. Signing is off-chain: it sends no transaction, approves no tokens and costs no gas. The console never asks
        for a seed phrase or a private key.
      </p>
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {error && (
        <div class="form-error" role="alert">
          <p>{error}</p>
          {wrongChain && (
            <p class="row">
              {wrongChain.accepted.map((chainId) => (
                <button
                  key={chainId}
                  type="button"
                  disabled={busy !== null}
                  onClick={async () => {
                    try {
                      await switchChain(wrongChain.wallet, chainId);
                    } catch (caught) {
                      setError((caught as Error).message);
                      return;
                    }
                    await pick(wrongChain.wallet);
                  }}
                >
                  Switch to {chainName(chainId)} and sign in
                </button>
              ))}
            </p>
          )}
        </div>
      )}
      {wallets.length > 0 ? (
        <ul class="wallets" aria-label="Wallets found in this browser">
          {wallets.map((wallet) => (
            <li key={wallet.info.uuid}>
              <button type="button" onClick={() => pick(wallet)} disabled={busy !== null} aria-busy={busy === wallet.info.uuid}>
                <img src={wallet.info.icon} alt="" width={32} height={32} />
                <span>{busy === wallet.info.uuid ? `Waiting for ${wallet.info.name}…` : `Sign in with ${wallet.info.name}`}</span>
              </button>
            </li>
          ))}
        </ul>
      ) : looked ? (
        <div class="state empty" role="status">
          <p>
            <strong>No wallet found in this browser.</strong> Install or enable a browser wallet that supports EIP-6963 (MetaMask, Rabby, Coinbase
            Wallet, Frame…), then reload this page.
          </p>
        </div>
      ) : (
        <p class="state loading" role="status">
          Looking for wallets…
        </p>
      )}
      <p class="note">Connecting a phone wallet by QR code (WalletConnect) is planned.</p>
    </main>
  );
}
