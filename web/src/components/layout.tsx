import type { ComponentChildren } from 'preact';
import type { SessionInfo } from '../api.ts';
import { shortAddress } from '../money.ts';
import { onLinkClick } from '../router.ts';

const PAGES: Array<[string, string]> = [
  ['/console', 'Overview'],
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
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}
