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
import { DEFAULT_ACCOUNT_ID } from '../src/storage/store.ts';

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

    /** At desktop and phone width: no sideways scrolling, no serious accessibility violation, a screenshot each. */
    async function look(name: string): Promise<void> {
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: width === 390 ? 844 : 800 });
        await page.waitForTimeout(120);
        const { scrollWidth, clientWidth } = (await page.evaluate(
          '({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth })',
        )) as { scrollWidth: number; clientWidth: number };
        assert.ok(scrollWidth <= clientWidth, `${name} at ${width} px: ${scrollWidth} px wide, wider than the ${clientWidth} px viewport`);
        // A chart's axis labels stay inside its drawing (a narrow chart's left margin fits its longest amount).
        const clipped = (await page.evaluate(`[...document.querySelectorAll('.usage-chart svg')].flatMap((svg) => {
          const box = svg.getBoundingClientRect();
          return [...svg.querySelectorAll('text')].filter((text) => {
            const at = text.getBoundingClientRect();
            return at.left < box.left - 0.5 || at.right > box.right + 0.5;
          }).map((text) => text.textContent);
        })`)) as string[];
        assert.deepEqual(clipped, [], `${name} at ${width} px: chart labels cut off`);
        const violations = await seriousViolations(page);
        assert.deepEqual(violations, [], `${name} at ${width} px: serious or critical accessibility violations`);
      }
      await page.setViewportSize({ width: 1280, height: 800 });
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
      await page.getByTestId('balance').getByText('$1,000.00').waitFor();
      await page
        .getByText(`${ownerAccount.address.slice(0, 6)}…`)
        .first()
        .waitFor();
      await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: 'hello' }] });
      await visit('/console', 'Overview', 'overview');
    });

    test('keys: create one, use it with the openai SDK, revoke it and see key_revoked', async () => {
      await visit('/console/keys', 'API keys', 'keys');
      await page.getByRole('button', { name: 'Create a key' }).click();
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

    /** A console API GET from the signed-in page (its session cookie), parsed. */
    const consoleGet = async (path: string) => JSON.parse((await page.evaluate(`fetch(${JSON.stringify(path)}).then((r) => r.text())`)) as string);

    test('receipts: the key filter takes the prefix the pages show; the export equals the API rows to the nano-dollar', async () => {
      const { key, record } = await harness.createKey({ name: 'exported' });
      for (let index = 0; index < 3; index++)
        await harness.post('/v1/chat/completions', { model: 'up/alpha', messages: [{ role: 'user', content: `n${index}` }] }, key);
      await visit(`/console/receipts?key=${record.prefix}`, 'Receipts', 'receipts-by-key');
      await page.getByRole('cell', { name: record.prefix }).first().waitFor();
      assert.equal(await page.locator('tbody tr').count(), 3, 'the three receipts of the key, found by its prefix');
      const listed = await consoleGet(`/console/api/receipts?key=${record.prefix}&limit=100`);
      const json = await consoleGet(`/console/api/receipts/export?key=${record.prefix}&format=json`);
      assert.deepEqual(json, listed.data, 'JSON export: the same receipts, field for field');
      const csv = (await page.evaluate(`fetch("/console/api/receipts/export?key=${record.prefix}&format=csv").then((r) => r.text())`)) as string;
      const [header, ...lines] = csv
        .trim()
        .split('\n')
        .map((line) => line.split(','));
      assert.deepEqual(
        lines.map((line) => [line[header!.indexOf('id')], line[header!.indexOf('cost_usd')]]),
        listed.data.map((receipt: { id: string; cost: string }) => [receipt.id, receipt.cost]),
      );
      assert.ok(listed.data.every((receipt: { cost: string }) => /^\d+\.\d{9}$/.test(receipt.cost)));
      const all = await consoleGet('/console/api/receipts/export?format=json');
      const pages: unknown[] = [];
      let cursor: string | null = null;
      do {
        const next = await consoleGet(`/console/api/receipts?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        pages.push(...next.data);
        cursor = next.next_cursor;
      } while (cursor);
      assert.deepEqual(all, pages, 'the whole set, not one page');
    });

    test('usage: per key and per model equal the sums of the receipts; a failed fallback candidate shows its failures', async () => {
      harness.fake.script('beta', { status: 503 });
      const fallback = await harness.post('/v1/chat/completions', { model: 'svc/best', messages: [{ role: 'user', content: 'fall back' }] });
      assert.equal(fallback.headers.get('x-svc-model'), 'anth/claude');
      const receipts = await consoleGet('/console/api/receipts/export?format=json');
      const usage = (by: string) => consoleGet(`/console/api/usage?range=24h&by=${by}`);
      const sums = new Map<string, { cost: bigint; requests: number }>();
      for (const receipt of receipts) {
        const entry = sums.get(receipt.key.id) ?? { cost: 0n, requests: 0 };
        entry.cost += BigInt(receipt.cost.replace('.', ''));
        entry.requests += 1;
        sums.set(receipt.key.id, entry);
      }
      const byKey = await usage('key');
      const keyTotals = new Map<string, { cost: bigint; requests: number }>();
      for (const row of byKey.series) {
        const entry = keyTotals.get(row.group) ?? { cost: 0n, requests: 0 };
        entry.cost += BigInt(row.cost.replace('.', ''));
        entry.requests += row.requests;
        keyTotals.set(row.group, entry);
      }
      assert.deepEqual(keyTotals, sums, 'per key: cost to the nano-dollar and requests');
      const byModel = await usage('model');
      const beta = byModel.series.filter((row: { group: string }) => row.group === 'up/beta');
      assert.ok(beta.reduce((sum: number, row: { failed_attempts: number }) => sum + row.failed_attempts, 0) >= 1, 'the failed candidate is counted');
      const modelCost = byModel.series.reduce((sum: bigint, row: { cost: string }) => sum + BigInt(row.cost.replace('.', '')), 0n);
      assert.equal(
        modelCost,
        [...sums.values()].reduce((sum, entry) => sum + entry.cost, 0n),
        'per model: the same total',
      );
      await visit('/console/usage?model=up%2Fbeta', 'Usage', 'usage-model');
      await page.locator('tr[data-group="up/beta"]').waitFor();
      await visit('/console/usage?by=model&metric=errors', 'Usage', 'usage');
      await page.getByRole('img', { name: /per (hour|day) \(UTC\), stacked by model/ }).waitFor();
      await page.locator('.usage-chart g[tabindex="0"]').first().hover();
      await page.locator('.chart-tip').getByText('UTC').waitFor();
    });

    test('limits: alerts set on the page show a banner on every page and are audited; errors sit beside their field', async () => {
      await visit('/console/limits', 'Limits', 'limits-alerts');
      await page.getByText('get the default of 600 requests per minute').waitFor();
      await page.getByLabel('When the available balance is below (USD)').fill('100000');
      await page.getByRole('button', { name: 'Save alerts' }).click();
      const banner = page.getByRole('status', { name: 'Alerts' });
      await banner.getByText('Low balance').waitFor();
      await page.getByRole('link', { name: 'Keys' }).click();
      await banner.getByText('Low balance').waitFor();
      const metrics = await (await fetch(`${harness.gateway.url}/metrics`)).text();
      assert.match(metrics, /gateway_account_alert\{alert="balance_low"\} 1/);
      const audit = await consoleGet('/console/api/audit?action=alerts.set');
      assert.match(audit.data[0].sentence, /set the alerts: low-balance alert from off to below \$100,000\.00/);
      assert.match(audit.data[0].actor, /^0x[0-9a-fA-F]{40}$/);
      assert.notEqual(audit.data[0].actor, audit.data[0].actor.toLowerCase(), 'checksummed, not lower case');
      await page.getByRole('link', { name: 'Limits' }).click();
      await page.getByLabel('When the available balance is below (USD)').fill('');
      await page.getByRole('button', { name: 'Save alerts' }).click();
      await banner.waitFor({ state: 'detached' });
      await page.getByLabel('Budget (USD per UTC month)').fill('-5');
      await page.getByRole('button', { name: 'Save budget' }).click();
      const fieldError = page.locator('#budget-error');
      await fieldError.waitFor();
      assert.doesNotMatch((await fieldError.textContent())!, /^monthly_budget:/, 'the field name is not repeated raw');
      assert.equal(await page.getByLabel('Budget (USD per UTC month)').getAttribute('aria-invalid'), 'true');
    });

    test('keys: edit name, models from the list and limits in place; created and expiry shown', async () => {
      const { record } = await harness.createKey({ name: 'to-edit' });
      await visit('/console/keys', 'API keys', 'keys-list');
      const row = page.locator(`tr[data-prefix="${record.prefix}"]`);
      await row.getByRole('button', { name: `Edit ${record.prefix}` }).click();
      const form = page.getByRole('form', { name: `Edit ${record.prefix}` });
      await form.getByLabel('Name').fill('edited');
      await form.getByLabel('only these:').check();
      await form.getByRole('checkbox', { name: 'svc/fast' }).check();
      await form.getByLabel('Daily limit (USD)').fill('2.5');
      await look('keys-edit');
      await form.getByRole('button', { name: `Save ${record.prefix}` }).click();
      await row.getByRole('cell', { name: 'edited', exact: true }).waitFor();
      const keys = await consoleGet('/console/api/keys');
      const edited = keys.data.find((key: { id: string }) => key.id === record.id);
      assert.deepEqual([edited.name, edited.models, edited.daily_limit], ['edited', ['svc/fast'], '2.500000000']);
      assert.equal(await row.locator('td[data-label="Expires"]').textContent(), 'never');
      const [entry] = (await consoleGet('/console/api/audit?action=key.updated')).data;
      assert.match(
        entry.sentence,
        /changed key svc_\w+: name from "to-edit" to "edited", models from every model to svc\/fast, daily limit from no daily limit to \$2\.50 a day/,
      );
    });

    test('errors: a missing receipt says so without "Try again"; an unreachable gateway offers a retry', async () => {
      await page.goto(`${harness.gateway.url}/console/receipts/rcpt_missing`);
      await page.getByRole('alert').getByText('No receipt rcpt_missing').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Try again' }).count(), 0);
      await page.getByRole('link', { name: 'Back to the overview' }).waitFor();
      await page.route('**/console/api/balance', (route) => route.abort('connectionrefused'));
      await page.goto(`${harness.gateway.url}/console/balance`);
      await page.getByText('Gateway unreachable.').waitFor();
      await page.getByRole('button', { name: 'Try again' }).waitFor();
      await look('error-unreachable');
      await page.unroute('**/console/api/balance');
    });

    test('rules: a candidate routing skips shows its cool-down and until when', async () => {
      const until = Date.now() + 120_000;
      harness.gateway.deps.health.board.coolDown('anth/claude', { until, reason: '5 consecutive failures, the last timeout' });
      try {
        await visit('/console/rules', 'Rules', 'rules-cooling');
        const best = page.getByRole('form', { name: 'Rule for svc/best' });
        await best.getByText(`skipped: cooling down until ${new Date(until).toISOString().slice(0, 10)}`).waitFor();
        await best.getByText('5 consecutive failures, the last timeout', { exact: false }).waitFor();
        assert.ok((await best.getByText('in use').count()) >= 1, 'the healthy candidate says so');
      } finally {
        harness.gateway.deps.health.board.restore('anth/claude');
      }
    });

    test('audit log and members pages', async () => {
      await visit('/console/audit', 'Audit log', 'audit');
      await page.getByLabel('What').selectOption('funds.added');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/action=funds\.added/);
      // The filtered page has replaced the whole log: only funds entries are left.
      await page.waitForFunction(
        'document.querySelectorAll("ol.audit li").length > 0 && document.querySelectorAll("ol.audit li:not([data-action=\'funds.added\'])").length === 0',
      );
      await page.getByText(/added \$12\.50 to the balance \("browser top-up"\)/).waitFor();
      await page.getByLabel('Who').fill('cli');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('No entries match.').waitFor();
      await visit('/console/audit', 'Audit log', 'audit');
      await page
        .getByText(/created key svc_\w+ "browser-made"/)
        .first()
        .waitFor();
      await visit('/console/members', 'Members', 'members');
    });

    test('a second address is refused with words a person understands', async () => {
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.waitForURL(/\/login/);
      await page.getByRole('button', { name: 'Sign in with Second Wallet' }).click();
      await page.getByRole('alert').getByText('is not a member of this workspace').waitFor();
      await look('login-refused');
    });

    test('account switch: one click ends the session and signs in the new account with one new signature', async () => {
      main.account = ownerAccount;
      await signInWith('Test Wallet');
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await harness.gateway.deps.store.addMember(DEFAULT_ACCOUNT_ID, switchedAccount.address.toLowerCase(), 'test', new Date().toISOString());
      await switchAccount(page, main, switchedAccount);
      const banner = page.getByRole('alert').filter({ hasText: 'Your wallet switched to' });
      await banner.waitFor();
      await look('account-switch-banner');
      const signaturesBefore = main.signatures ?? 0;
      await banner.getByRole('button', { name: 'Sign in with the new wallet' }).click();
      await page
        .getByText(`${switchedAccount.address.slice(0, 6)}…`)
        .first()
        .waitFor();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      assert.equal((main.signatures ?? 0) - signaturesBefore, 1, 'exactly one new signature');
      const session = (await page.evaluate('fetch("/console/api/session").then((response) => response.json())')) as { address: string };
      assert.equal(session.address, switchedAccount.address, 'signed in as the new account');
      assert.equal(await banner.count(), 0, 'the banner is gone');
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.waitForURL(/\/login/);
      main.account = ownerAccount;
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
      for (let presses = 0; presses < 4; presses++) await page.keyboard.press('Tab');
      assert.equal(await page.evaluate('document.activeElement.textContent'), 'Keys');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
      await page.getByRole('button', { name: 'Create a key' }).click();
      await page.getByLabel('Name').focus();
      await page.keyboard.type('typed-key');
      await page.keyboard.press('Enter');
      await page.getByTestId('new-key').waitFor();
    });

    test('an ended session goes back to /login saying why; a wallet on the wrong chain is offered a switch', async () => {
      main.account = ownerAccount;
      await page.goto(`${harness.gateway.url}/console`);
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      // Every call of the page answered before the session ends, so the next one is the first to find it ended.
      await page.waitForLoadState('networkidle');
      await harness.gateway.deps.store.endSessionsOf(DEFAULT_ACCOUNT_ID, ownerAccount.address.toLowerCase(), new Date().toISOString());
      await page.getByRole('link', { name: 'Keys' }).click();
      await page.waitForURL(/\/login/);
      await page.getByText('Your session ended').waitFor();
      main.chainId = 137;
      const before = main.signatures ?? 0;
      await page.getByRole('button', { name: 'Sign in with Test Wallet' }).click();
      const offer = page.getByRole('button', { name: 'Switch to Ethereum (chain 1) and sign in' });
      await offer.waitFor();
      await page.getByText('Your wallet is on Polygon (chain 137)').waitFor();
      await look('login-wrong-chain');
      await offer.click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      assert.equal(main.chainId, 1);
      assert.equal((main.signatures ?? 0) - before, 1);
    });

    test('every page was looked at, at desktop and phone width', () => {
      for (const name of ['login', 'overview', 'usage', 'keys', 'limits', 'rules', 'balance', 'receipts', 'receipt-detail', 'audit', 'members']) {
        assert.ok(checked.includes(name), `${name} was checked`);
      }
    });
  });
}
