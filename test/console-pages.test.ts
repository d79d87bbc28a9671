import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { privateKeyToAccount } from 'viem/accounts';
import { parseUsd } from '../src/lib/money.ts';
import { CONSOLE_CSP } from '../src/http/console/console-pages.ts';
import {
  chromiumMissing,
  installWallets,
  launchChromium,
  SCREENSHOTS,
  screenshots,
  seriousViolations,
  switchAccount,
  type MockWallet,
} from './helpers/browser.ts';
import { startHarness, type Harness } from './helpers/gateway-harness.ts';

const ownerAccount = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const strangerAccount = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a');
const switchedAccount = privateKeyToAccount('0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6');

const missing = chromiumMissing();

if (missing !== null) {
  if (process.env.CI === 'true') test('console pages in Chromium', () => assert.fail(`${missing}; CI=true requires it`));
  else test('console pages in Chromium', { skip: missing }, () => undefined);
} else {
  describe('console pages in real Chromium', () => {
    let harness: Harness;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    const main: MockWallet = { id: 'main', name: 'Test Wallet', rdns: 'org.example.test', account: ownerAccount };
    const other: MockWallet = { id: 'other', name: 'Second Wallet', rdns: 'org.example.second', account: strangerAccount };
    const refusing: MockWallet = { id: 'refusing', name: 'Careful Wallet', rdns: 'org.example.careful', account: strangerAccount, rejects: true };
    const checked: string[] = [];

    /** Go to a console page, wait for its heading, check accessibility, take both screenshots. */
    async function visit(path: string, heading: string | RegExp, name: string): Promise<void> {
      await page.goto(`${harness.gateway.url}${path}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await page
        .locator('.state.loading')
        .first()
        .waitFor({ state: 'detached' })
        .catch(() => undefined);
      await look(name);
    }

    async function look(name: string): Promise<void> {
      const violations = await seriousViolations(page);
      assert.deepEqual(violations, [], `${name}: serious or critical accessibility violations`);
      await screenshots(page, name);
      checked.push(name);
    }

    async function signInWith(walletName: string): Promise<void> {
      await page.goto(`${harness.gateway.url}/login`);
      await page.getByRole('button', { name: `Sign in with ${walletName}` }).click();
    }

    before(async () => {
      harness = await startHarness();
      browser = await launchChromium();
      // axe-core is injected as a script tag, which the console's own CSP would refuse (as it should).
      context = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
      await installWallets(context, [main, other, refusing]);
      page = await context.newPage();
      page.on('pageerror', (error) => console.error(`[page error] ${error.message}`));
    });

    after(async () => {
      await browser?.close();
      await harness?.close();
    });

    test('pages are served with a CSP that forbids framing, and assets with a year of caching', async () => {
      const response = await fetch(`${harness.gateway.url}/console`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-security-policy'), CONSOLE_CSP);
      assert.equal(response.headers.get('x-frame-options'), 'DENY');
      const html = await response.text();
      const script = /src="(\/console\/assets\/app-[0-9a-f]{12}\.js)"/.exec(html)![1]!;
      const asset = await fetch(`${harness.gateway.url}${script}`);
      assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.match(asset.headers.get('content-type') ?? '', /javascript/);
    });

    test('/login lists every announced wallet; a refusal in the wallet is said in words', async () => {
      await page.goto(`${harness.gateway.url}/login`);
      for (const name of ['Test Wallet', 'Second Wallet', 'Careful Wallet'])
        await page.getByRole('button', { name: `Sign in with ${name}` }).waitFor();
      await page.getByText('WalletConnect').waitFor();
      await look('login');
      await page.getByRole('button', { name: 'Sign in with Careful Wallet' }).click();
      await page.getByRole('alert').getByText('You declined the request in your wallet').waitFor();
    });

    test('the first wallet signs in and owns the workspace; the overview shows the balance', async () => {
      await signInWith('Test Wallet');
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.getByTestId('balance').getByText('$1000.00').waitFor();
      await page
        .getByText(`${ownerAccount.address.slice(0, 6)}…`)
        .first()
        .waitFor();
      await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'hello' }] });
      await visit('/console', 'Overview', 'overview');
    });

    test('keys: create one, use it with the openai SDK, revoke it and see key_revoked', async () => {
      await visit('/console/keys', 'API keys', 'keys');
      await page.getByLabel('Name').fill('browser-made');
      await page.getByRole('button', { name: 'Create key' }).click();
      const key = (await page.getByTestId('new-key').textContent())!;
      assert.match(key, /^svc_/);
      await page.getByText('it is shown this once').waitFor();
      await screenshots(page, 'keys-new-key');
      const client = new OpenAI({ baseURL: harness.baseURL, apiKey: key, maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(completion.model, 'up/alpha');

      await page.getByRole('button', { name: 'Done' }).click();
      const prefix = key.slice(0, 12);
      const row = page.locator(`tr[data-prefix="${prefix}"]`);
      await row.getByRole('button', { name: /^Revoke/ }).click();
      await row.getByRole('button', { name: 'Yes, revoke' }).click();
      await row.getByText('revoked').waitFor();
      await assert.rejects(
        client.chat.completions.create({ model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] }),
        (error: { status?: number; code?: string }) => {
          assert.deepEqual([error.status, error.code], [401, 'key_revoked']);
          return true;
        },
      );
    });

    test('limits: a daily limit set on the page refuses a request with budget_exceeded', async () => {
      const { key, record } = await harness.createKey({ name: 'limited' });
      await visit('/console/limits', 'Limits', 'limits');
      const row = page.locator(`tr[data-prefix="${record.prefix}"]`);
      await row.getByLabel(`Daily limit of ${record.prefix} (USD)`).fill('0.000001');
      const saved = page.waitForResponse(
        (response) => response.url().endsWith(`/console/api/keys/${record.id}`) && response.request().method() === 'PATCH',
      );
      await row.getByRole('button', { name: `Save limits of ${record.prefix}` }).click();
      assert.equal((await saved).status(), 200);
      const client = new OpenAI({ baseURL: harness.baseURL, apiKey: key, maxRetries: 0 });
      await assert.rejects(
        client.chat.completions.create({ model: 'up/alpha', messages: [{ role: 'user', content: 'hi' }] }),
        (error: { status?: number; code?: string }) => {
          assert.deepEqual([error.status, error.code], [402, 'budget_exceeded']);
          return true;
        },
      );
    });

    test('rules: moving a candidate up changes the model that answers', async () => {
      await visit('/console/rules', 'Rules', 'rules');
      const fast = page.getByRole('form', { name: 'Rule for svc/fast' });
      await fast.getByRole('button', { name: 'Move up/beta up' }).click();
      await fast.getByRole('button', { name: 'Save svc/fast' }).click();
      await page.getByText('set in the console').waitFor();
      const response = await harness.post('/v1/chat/completions', { model: 'svc/fast', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(response.headers.get('x-svc-model'), 'up/beta');
    });

    test('balance: funds added on the page show in the balance', async () => {
      await visit('/console/balance', 'Balance', 'balance');
      const before = parseUsd(JSON.parse(await (await harness.get('/v1/balance')).text()).balance);
      await page.getByLabel('Amount (USD)').fill('12.5');
      await page.getByLabel('Note').fill('browser top-up');
      await page.getByRole('button', { name: 'Add funds' }).click();
      await page.getByRole('cell', { name: 'browser top-up' }).waitFor();
      const after = parseUsd(JSON.parse(await (await harness.get('/v1/balance')).text()).balance);
      assert.equal(after - before, 12_500_000_000);
    });

    test("receipts: the list, filters, and a receipt's detail with attempts, usage and cost", async () => {
      await visit('/console/receipts', 'Receipts', 'receipts');
      await page.getByLabel('Model').fill('svc/fast');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/model=svc%2Ffast/);
      const link = page.getByRole('link', { name: /^rcpt_/ }).first();
      const id = (await link.textContent())!;
      await link.click();
      await page.getByRole('heading', { level: 1, name: `Receipt ${id}` }).waitFor();
      const receipt = JSON.parse(await (await harness.get(`/v1/receipts/${id}`)).text());
      await page
        .getByTestId('receipt-cost')
        .getByText(new RegExp(`^\\$${receipt.cost.replace(/0+$/, '').replace('.', '\\.')}`))
        .waitFor();
      await page.getByRole('table', { name: 'Attempts in order' }).waitFor();
      await look('receipt-detail');
    });

    test('audit log and members pages', async () => {
      await visit('/console/audit', 'Audit log', 'audit');
      await page.getByRole('cell', { name: 'key.created' }).first().waitFor();
      await visit('/console/members', 'Members', 'members');
    });

    test('a second address is refused with words a person understands', async () => {
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.waitForURL(/\/login/);
      await page.getByRole('button', { name: 'Sign in with Second Wallet' }).click();
      await page.getByRole('alert').getByText('is not a member of this workspace').waitFor();
      await look('login-refused');
    });

    test('account switch: the banner appears and its action starts a new sign-in', async () => {
      main.account = ownerAccount;
      await signInWith('Test Wallet');
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await switchAccount(page, main, switchedAccount);
      const banner = page.getByRole('alert').filter({ hasText: 'Your wallet switched to' });
      await banner.waitFor();
      await look('account-switch-banner');
      await banner.getByRole('button', { name: 'Sign in with the new wallet' }).click();
      await page.waitForURL(/\/login\?switched=1/);
      await page.getByText('Sign in with the wallet you switched to').waitFor();
      const session = await page.evaluate('fetch("/console/api/session").then((response) => response.status)');
      assert.equal(session, 401, 'the old session ended on the server');
    });

    test('a browser without wallets is told so; the console works by keyboard', async () => {
      const bare = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      try {
        const lonely = await bare.newPage();
        await lonely.goto(`${harness.gateway.url}/login`);
        await lonely.getByText('No wallet found in this browser.').waitFor();
        await lonely.screenshot({ path: `${SCREENSHOTS}/login-no-wallet-desktop.png` });
      } finally {
        await bare.close();
      }
      main.account = ownerAccount;
      await signInWith('Test Wallet');
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate('document.activeElement.textContent'), 'Skip to content');
      // Through the brand and the nav to Keys, then Enter follows the link.
      for (let presses = 0; presses < 3; presses++) await page.keyboard.press('Tab');
      assert.equal(await page.evaluate('document.activeElement.textContent'), 'Keys');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
      await page.getByLabel('Name').focus();
      await page.keyboard.type('typed-key');
      await page.keyboard.press('Enter');
      await page.getByTestId('new-key').waitFor();
    });

    test('every page was looked at, at desktop and phone width', () => {
      for (const name of ['login', 'overview', 'keys', 'limits', 'rules', 'balance', 'receipts', 'receipt-detail', 'audit', 'members']) {
        assert.ok(checked.includes(name), `${name} was checked`);
      }
    });
  });
}
