import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { PrivateKeyAccount } from 'viem/accounts';

/** Debian's Chromium, driven by playwright-core (no browser download). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where the page tests write their screenshots, for a person to look at (README: Console pages). */
export const SCREENSHOTS = join(process.cwd(), 'test-output', 'screenshots');

export function chromiumMissing(): string | null {
  return existsSync(CHROMIUM) ? null : `Chromium not found at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // Without these, Chromium reaches for Google's services, which this network refuses.
    args: ['--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface MockWallet {
  id: string;
  name: string;
  rdns: string;
  account: PrivateKeyAccount;
  /** Refuse signing requests, as a person pressing "Reject" does. */
  rejects?: boolean;
  /** The chain the wallet is on (1 unless set); wallet_switchEthereumChain moves it. */
  chainId?: number;
  /** Signatures the wallet made, counted. */
  signatures?: number;
}

const ICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E%3Crect width='32' height='32' rx='6' fill='%231f4fc4'/%3E%3C/svg%3E";

/**
 * Browser wallets for the page: EIP-1193 providers announced through EIP-6963, whose requests
 * are answered in Node by viem accounts the test holds. The page side is plain JavaScript text:
 * functions serialized from TypeScript would carry helpers the page does not have.
 */
export async function installWallets(context: BrowserContext, wallets: MockWallet[]): Promise<void> {
  const byId = new Map(wallets.map((wallet) => [wallet.id, wallet]));
  await context.exposeFunction('__mockWalletRpc', async (id: string, method: string, params: unknown[]) => {
    const wallet = byId.get(id)!;
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return { value: [wallet.account.address] };
      case 'eth_chainId':
        return { value: `0x${(wallet.chainId ?? 1).toString(16)}` };
      case 'wallet_switchEthereumChain':
        wallet.chainId = Number.parseInt((params as [{ chainId: string }])[0].chainId, 16);
        return { value: null };
      case 'personal_sign': {
        if (wallet.rejects) return { error: { code: 4001, message: 'User rejected the request.' } };
        const [message, address] = params as [`0x${string}`, string];
        if (address.toLowerCase() !== wallet.account.address.toLowerCase()) return { error: { code: 4100, message: 'Unknown account.' } };
        wallet.signatures = (wallet.signatures ?? 0) + 1;
        return { value: await wallet.account.signMessage({ message: { raw: message } }) };
      }
      default:
        return { error: { code: 4200, message: `Unsupported method ${method}` } };
    }
  });
  const info = wallets.map((wallet) => ({ id: wallet.id, name: wallet.name, rdns: wallet.rdns, icon: ICON }));
  await context.addInitScript({
    content: `(() => {
      const wallets = ${JSON.stringify(info)};
      window.__mockWallets = {};
      for (const wallet of wallets) {
        const listeners = {};
        const provider = {
          request: async ({ method, params }) => {
            const answer = await window.__mockWalletRpc(wallet.id, method, params || []);
            if (answer.error) {
              const error = new Error(answer.error.message);
              error.code = answer.error.code;
              throw error;
            }
            return answer.value;
          },
          on: (event, listener) => { (listeners[event] = listeners[event] || new Set()).add(listener); },
          removeListener: (event, listener) => { if (listeners[event]) listeners[event].delete(listener); },
          emit: (event, value) => { for (const listener of listeners[event] || []) listener(value); },
        };
        window.__mockWallets[wallet.id] = provider;
        const detail = Object.freeze({ info: Object.freeze({ uuid: crypto.randomUUID(), name: wallet.name, icon: wallet.icon, rdns: wallet.rdns }), provider });
        const announce = () => window.dispatchEvent(new CustomEvent('eip6963:announceProvider', { detail }));
        window.addEventListener('eip6963:requestProvider', announce);
        announce();
      }
    })();`,
  });
}

/** The wallet switches to another account and tells the page, as wallets do. */
export async function switchAccount(page: Page, wallet: MockWallet, next: PrivateKeyAccount): Promise<void> {
  wallet.account = next;
  await page.evaluate(`window.__mockWallets[${JSON.stringify(wallet.id)}].emit('accountsChanged', [${JSON.stringify(next.address)}])`);
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<Array<{ id: string; impact: string; help: string; targets: string[] }>> {
  const hasAxe = await page.evaluate('typeof window.axe !== "undefined"');
  if (!hasAxe) await page.addScriptTag({ content: await readFile(join(process.cwd(), 'node_modules', 'axe-core', 'axe.min.js'), 'utf8') });
  return page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, targets: violation.nodes.map((node) => node.target.join(' ')) })))`);
}

/** A full-page screenshot at desktop and phone width, named for the page. */
export async function screenshots(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const size = page.viewportSize()!;
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(150);
  await page.screenshot({ path: join(SCREENSHOTS, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(size);
  await page.waitForTimeout(100);
}
