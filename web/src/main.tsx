import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, SESSION_ENDED, setCsrfToken, type SessionInfo } from './api.ts';
import { Layout } from './components/layout.tsx';
import { Loading } from './components/states.tsx';
import { AuditPage } from './pages/audit.tsx';
import { BalancePage } from './pages/balance.tsx';
import { KeysPage } from './pages/keys.tsx';
import { LimitsPage } from './pages/limits.tsx';
import { LoginPage } from './pages/login.tsx';
import { MembersPage } from './pages/members.tsx';
import { OverviewPage } from './pages/overview.tsx';
import { ReceiptDetailPage, ReceiptsPage } from './pages/receipts.tsx';
import { RulesPage } from './pages/rules.tsx';
import { UsagePage } from './pages/usage.tsx';
import { navigate, usePath } from './router.ts';
import { lastWallet, signInWith, walletStore, type Wallet } from './wallets.ts';
import './styles.css';

function Page({ path, session }: { path: string; session: SessionInfo }) {
  const [pathname] = path.split('?');
  const receipt = /^\/console\/receipts\/([\w-]+)$/.exec(pathname!);
  if (receipt) return <ReceiptDetailPage id={receipt[1]!} />;
  switch (pathname) {
    case '/console/keys':
      return <KeysPage />;
    case '/console/limits':
      return <LimitsPage />;
    case '/console/rules':
      return <RulesPage />;
    case '/console/usage':
      return <UsagePage path={path} />;
    case '/console/receipts':
      return <ReceiptsPage path={path} />;
    case '/console/balance':
      return <BalancePage />;
    case '/console/audit':
      return <AuditPage path={path} />;
    case '/console/members':
      return <MembersPage session={session} />;
    default:
      return <OverviewPage />;
  }
}

/** Watches the wallet used to sign in: a switch to another account while signed in shows the banner. */
function useSwitchedAccount(session: SessionInfo | null): { switchedTo: string | null; wallet: Wallet | null } {
  const [state, setState] = useState<{ switchedTo: string | null; wallet: Wallet | null }>({ switchedTo: null, wallet: null });
  useEffect(() => {
    setState({ switchedTo: null, wallet: null });
    if (!session) return;
    let wallet: Wallet | undefined;
    const onAccounts = (accounts: unknown) => {
      const next = (accounts as string[])[0];
      const switched = next && next.toLowerCase() !== session.address.toLowerCase() ? next : null;
      setState({ switchedTo: switched, wallet: wallet ?? null });
    };
    const attach = () => {
      const found = lastWallet();
      if (!found || found === wallet) return;
      wallet?.provider.removeListener('accountsChanged', onAccounts as never);
      wallet = found;
      wallet.provider.on('accountsChanged', onAccounts as never);
    };
    attach();
    const unsubscribe = walletStore.subscribe(attach);
    return () => {
      unsubscribe();
      wallet?.provider.removeListener('accountsChanged', onAccounts as never);
    };
  }, [session?.address]);
  return state;
}

function App() {
  const path = usePath();
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const [notice, setNotice] = useState<string | null>(null);
  const switched = useSwitchedAccount(session ?? null);

  useEffect(() => {
    api<SessionInfo>('GET', '/session').then(
      (current) => {
        setCsrfToken(current.csrf_token);
        setSession(current);
      },
      (error) => {
        if (!(error instanceof ApiError) || error.status !== 401) console.warn(error);
        setSession(null);
      },
    );
  }, []);

  // A session ended elsewhere (signed out everywhere, expired, member removed): back to /login, saying why.
  useEffect(() => {
    const ended = () => {
      setCsrfToken(null);
      setNotice('Your session ended (signed out, expired or removed). Sign in again to continue.');
      setSession(null);
    };
    addEventListener(SESSION_ENDED, ended);
    return () => removeEventListener(SESSION_ENDED, ended);
  }, []);

  useEffect(() => {
    if (session === null && !path.startsWith('/login')) navigate('/login');
    if (session && path.startsWith('/login')) navigate('/console');
  }, [session, path]);

  if (session === undefined) return <Loading what="the console" />;
  if (session === null || path.startsWith('/login')) {
    return (
      <LoginPage
        onSignedIn={(next) => {
          setNotice(null);
          setSession(next);
        }}
        notice={notice ?? (path.includes('switched=1') ? 'Signed out. Sign in with the wallet you switched to.' : null)}
      />
    );
  }
  const signOut = async (everywhere: boolean) => {
    await api('POST', everywhere ? '/sign-out-everywhere' : '/sign-out').catch(() => undefined);
    setCsrfToken(null);
    setNotice(null);
    setSession(null);
  };
  // The contract's step 7: end this session, then sign in with the wallet's new account at once.
  const signInAgain = async () => {
    await api('POST', '/sign-out').catch(() => undefined);
    setCsrfToken(null);
    const wallet = switched.wallet;
    try {
      if (!wallet) throw new Error('Choose the wallet to sign in with.');
      const next = await signInWith(wallet);
      setNotice(null);
      setSession(next);
    } catch (error) {
      setNotice((error as Error).message);
      setSession(null);
      navigate('/login?switched=1');
    }
  };
  return (
    <Layout path={path} session={session} onSignOut={signOut} switchedTo={switched.switchedTo} onSignInAgain={signInAgain}>
      <Page path={path} session={session} />
    </Layout>
  );
}

render(<App />, document.getElementById('app')!);
