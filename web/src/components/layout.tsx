import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type SessionInfo } from '../api.ts';
import { shortAddress, usd } from '../money.ts';
import { onLinkClick } from '../router.ts';

interface ActiveAlert {
  kind: 'balance_low' | 'budget_share';
  threshold: string;
  value: string;
}

/** The account's alerts, read again on every page change (and after a change on the Limits page). */
function AlertsBanner({ path }: { path: string }) {
  const [alerts, setAlerts] = useState<ActiveAlert[]>([]);
  useEffect(() => {
    let current = true;
    const load = () =>
      api<{ active: ActiveAlert[] }>('GET', '/alerts').then(
        (answer) => current && setAlerts(answer.active),
        () => undefined,
      );
    load();
    addEventListener(ALERTS_CHANGED, load);
    return () => {
      current = false;
      removeEventListener(ALERTS_CHANGED, load);
    };
  }, [path]);
  if (!alerts.length) return null;
  return (
    <div class="banner alert-banner" role="status" aria-label="Alerts">
      {alerts.map((alert) => (
        <p key={alert.kind}>
          {alert.kind === 'balance_low' ? (
            <>
              <strong>Low balance:</strong> {usd(alert.value)} available, below the alert at {usd(alert.threshold)}.{' '}
              <a href="/console/balance" onClick={onLinkClick}>
                Add funds
              </a>
            </>
          ) : (
            <>
              <strong>Budget:</strong> this month's spend and holds, {usd(alert.value)}, passed the alert at {usd(alert.threshold)}.{' '}
              <a href="/console/limits" onClick={onLinkClick}>
                See limits
              </a>
            </>
          )}
        </p>
      ))}
    </div>
  );
}

/** Dispatched on window by the Limits page when it saved alerts or a budget. */
export const ALERTS_CHANGED = 'console:alerts-changed';

const PAGES: Array<[string, string]> = [
  ['/console', 'Overview'],
  ['/console/usage', 'Usage'],
  ['/console/keys', 'Keys'],
  ['/console/limits', 'Limits'],
  ['/console/rules', 'Rules'],
  ['/console/receipts', 'Receipts'],
  ['/console/balance', 'Balance'],
  ['/console/audit', 'Audit log'],
  ['/console/members', 'Members'],
];

export function Layout(props: {
  path: string;
  session: SessionInfo;
  switchedTo: string | null;
  onSignOut: (everywhere: boolean) => void;
  onSignInAgain: () => void;
  children: ComponentChildren;
}) {
  const current = props.path.split('?')[0]!;
  const active = (href: string) => (href === '/console' ? current === '/console' || current === '/console/' : current.startsWith(href));
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/console" onClick={onLinkClick}>
          model-gateway
        </a>
        <nav aria-label="Console">
          <ul>
            {PAGES.map(([href, label]) => (
              <li key={href}>
                <a href={href} onClick={onLinkClick} aria-current={active(href) ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span title={props.session.address}>
            {shortAddress(props.session.address)} · {props.session.role}
          </span>
          <button type="button" class="link" onClick={() => props.onSignOut(false)}>
            Sign out
          </button>
          <button type="button" class="link" onClick={() => props.onSignOut(true)}>
            Sign out everywhere
          </button>
        </div>
      </header>
      {props.switchedTo && (
        <div class="banner" role="alert">
          <p>
            Your wallet switched to <strong>{props.switchedTo}</strong>, but you are signed in as <strong>{props.session.address}</strong>.
          </p>
          <button type="button" onClick={props.onSignInAgain}>
            Sign in with the new wallet
          </button>
        </div>
      )}
      <AlertsBanner path={props.path} />
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}
