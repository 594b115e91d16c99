/**
 * The dashboard end to end: Debian's chromium against the real server (server/src/main.ts as a child
 * process, real SMTP capture, the compiled CLI). Each test makes its own users and saves a screenshot of
 * its final screen to test-artifacts/.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { WEBHOOK_EVENTS } from '@svcenv/contract/constants';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  repoRoot,
  type ServerProcess,
  signupUser,
  startServer,
  upsert,
} from '../../server/test/harness.js';
import { startSmtpCapture } from '../../server/test/smtp.js';
import { chromiumAvailable, launch, openTab, screenshot, totp } from './browser.js';

const run = promisify(execFile);
const cliBinary = join(repoRoot, 'dist', 'cli', 'svcenv-linux-x64');

describe.skipIf(!chromiumAvailable())('dashboard in a browser', () => {
  let server: ServerProcess;
  let smtp: Awaited<ReturnType<typeof startSmtpCapture>>;
  let browser: Browser;

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    [server, browser] = await Promise.all([
      startServer({ env: { SMTP_URL: smtp.url, WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'warn' } }),
      launch(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await smtp?.stop();
  });

  async function login(page: Page, email: string, password: string) {
    await page.goto('/login');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
  }

  it('signs up, creates a project, edits variables with references, reveals, restores history, imports, compares and exports', async () => {
    const { page, context, problems } = await openTab(browser, server.url);
    const email = `ada-${Date.now()}@example.test`;
    await page.goto('/');
    await expect.poll(() => page.url()).toContain('/login');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Your name').fill('Ada Lovelace');
    await page.getByLabel('Work email').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    // The browser's own check stops a short password; the server's rule (D8) answers a bypass with its field.
    await page.getByLabel('Password').evaluate((el) => el.removeAttribute('minlength'));
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('must be at least 8 characters').waitFor();
    // A password on the lists of common ones: the server's message, under the field.
    await page.getByLabel('Password').fill('Password1');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('this password is on lists of commonly used passwords').waitFor();
    await screenshot(page, 'signup-common-password');
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('No projects yet').waitFor();
    // The session is an httpOnly cookie (ADR 0014): nothing in storage, nothing script can read.
    expect(await page.evaluate(() => localStorage.length + sessionStorage.length)).toBe(0);
    expect(await page.evaluate(() => document.cookie)).not.toContain('svcenv_session');
    const [cookie] = (await context.cookies()).filter((c) => c.name === 'svcenv_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(cookie?.value).toMatch(/^eyJ/);

    await page.getByRole('button', { name: 'New project' }).click();
    await page.getByLabel('Name').fill('payments-api');
    await page.getByLabel('Description').fill('Card payments and refunds');
    await page.getByRole('button', { name: '#10b981' }).click();
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('heading', { name: 'payments-api' }).waitFor();
    await expect.poll(() => page.getByRole('tab', { name: /prod/ }).textContent()).toContain('protected');

    /** Adds a variable; `unresolved` names the code the save must be refused with first (D67), then saved anyway. */
    const add = async (key: string, value: string, type: 'secret' | 'plain', unresolved?: string) => {
      await page.getByLabel('New key').fill(key);
      await page.getByLabel('New value').fill(value);
      await page.getByLabel('Type', { exact: true }).selectOption(type);
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      if (unresolved) {
        await expect.poll(() => page.getByTestId('unresolved-list').textContent()).toContain(unresolved);
        await page.getByTestId('save-anyway').click();
      }
      await page.getByTestId(`value-${key}`).waitFor();
    };
    await add('DB_HOST', 'db.internal', 'plain');
    await add('DB_PASSWORD', 's3cr3t-pa55', 'secret');
    await add('DATABASE_URL', 'postgres://app:${DB_PASSWORD}@${DB_HOST}/app', 'plain');
    // A reference to a key that does not exist yet, then a cycle: each is refused until saved anyway (D67).
    await add('LOOP_A', '${LOOP_B}', 'plain', 'Reference to a missing key');
    await add('LOOP_B', '${LOOP_A}', 'plain', 'References go in a circle');

    // Masked: the secret is dots, and the reference that used it resolves to *** (D26).
    await expect.poll(() => page.getByTestId('value-DB_PASSWORD').textContent()).toBe('••••••••');
    await expect.poll(() => page.getByTestId('resolved-DATABASE_URL').textContent()).toContain('••••');
    await page
      .getByText(/circular/i)
      .first()
      .waitFor();
    await page.getByRole('button', { name: 'Reveal DB_PASSWORD' }).click();
    await expect.poll(() => page.getByTestId('value-DB_PASSWORD').textContent()).toBe('s3cr3t-pa55');
    await page.getByRole('button', { name: 'Reveal all' }).click();
    await expect
      .poll(() => page.getByTestId('resolved-DATABASE_URL').textContent())
      .toContain('postgres://app:s3cr3t-pa55@db.internal/app');

    // Inline edit with an expiry, then restore the old value from history.
    await page.getByRole('button', { name: 'Edit DB_HOST' }).click();
    await page.getByLabel('Value of DB_HOST').fill('db2.internal');
    await page.getByLabel('Expiry of DB_HOST').fill(new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10));
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => page.getByTestId('value-DB_HOST').textContent()).toBe('db2.internal');
    await page.getByText(/expires in [45] days/).waitFor();
    await page.getByRole('button', { name: 'History of DB_HOST' }).click();
    const dialog = page.getByRole('dialog', { name: 'History of DB_HOST' });
    await dialog.getByText('db.internal', { exact: true }).waitFor();
    await dialog
      .getByRole('button', { name: /Restore version/ })
      .last()
      .click();
    await expect.poll(() => page.getByTestId('value-DB_HOST').textContent()).toBe('db.internal');
    await expect.poll(() => page.getByTestId('resolved-DATABASE_URL').textContent()).toContain('@db.internal/app');

    // Paste a .env into dev and staging with a preview of what each gets.
    await page.getByRole('button', { name: 'Import .env' }).click();
    const imp = page.getByRole('dialog', { name: 'Import variables' });
    await imp.getByLabel('Paste a .env file').fill('# shared\nDB_HOST=db.shared\nexport FEATURE_FLAGS="a,b c"\n');
    await imp.getByRole('checkbox', { name: 'staging' }).check();
    await imp.getByRole('button', { name: 'All plain' }).click();
    const preview = imp.getByLabel('Preview');
    await expect.poll(() => preview.textContent()).toContain('dev1 new, 1 existing');
    await expect.poll(() => preview.textContent()).toContain('staging2 new, 0 existing');
    await imp.getByRole('button', { name: 'Save 2 variables' }).click();
    // One line per environment, each key counted once: DB_HOST is updated in dev, created in staging.
    await imp.getByText('Saved into dev: 1 created, 1 updated.').waitFor();
    await imp.getByText('Saved into staging: 2 created, 0 updated.').waitFor();
    await imp.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => page.getByTestId('value-FEATURE_FLAGS').textContent()).toBe('a,b c');

    // Bulk delete the two looping keys.
    await page.getByRole('checkbox', { name: 'Select LOOP_A' }).check();
    await page.getByRole('checkbox', { name: 'Select LOOP_B' }).check();
    await page.getByRole('button', { name: 'Delete selected' }).click();
    await page.getByRole('button', { name: 'Delete 2' }).click();
    await expect.poll(() => page.getByTestId('value-LOOP_A').count()).toBe(0);

    // Export: the file the server sends.
    const downloading = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export ▾' }).click();
    await page.getByRole('menuitem', { name: '.env (values)' }).click();
    const file = await (await downloading).path();
    const { readFileSync } = await import('node:fs');
    const exported = readFileSync(file, 'utf8');
    expect(exported).toContain('DB_PASSWORD=s3cr3t-pa55');
    expect(exported).toContain('SVCENV_ENV=dev');

    // Compare dev with staging: the server's diff beside the values.
    await page.getByRole('tab', { name: 'Compare' }).click();
    await page.getByLabel('Environment B').selectOption('staging');
    await expect.poll(() => page.getByTestId('diff-summary').textContent()).toContain('0 differ');
    await expect.poll(() => page.getByTestId('diff-summary').textContent()).toContain('2 only in dev');

    await page.getByRole('tab', { name: 'Variables' }).click();
    await page.getByTestId('value-DB_HOST').waitFor();
    // Environment colour (D21) and protection (Owner) from the toolbar.
    await page.getByLabel('Colour of dev').fill('#0ea5e9');
    await expect
      .poll(() =>
        page
          .getByRole('tab', { name: 'dev' })
          .locator('.env-dot')
          .evaluate((el) => getComputedStyle(el).backgroundColor),
      )
      .toBe('rgb(14, 165, 233)');
    await page.getByRole('button', { name: 'Protect', exact: true }).click();
    await expect.poll(() => page.getByRole('tab', { name: /dev/ }).textContent()).toContain('protected');
    await page.getByRole('button', { name: 'Reveal all' }).click();
    await expect.poll(() => page.getByTestId('value-DB_PASSWORD').textContent()).toBe('s3cr3t-pa55');
    expect(problems).toEqual([]);
    await screenshot(page, 'variables');
    await context.close();
  });

  it('creates an access token, shows it once, and the CLI pulls with it; rotate and revoke take effect', async () => {
    const owner = await signupUser(server, 'Grace');
    const project = await createProject(server, owner.jwt, { name: 'billing' });
    await upsert(
      server,
      owner.jwt,
      project.id,
      ['prod'],
      [{ key: 'STRIPE_KEY', value: 'sk_live_abc123', type: 'secret' }],
    );
    const { page, context, problems } = await openTab(browser, server.url);
    await login(page, owner.email, owner.password);
    await page.getByRole('link', { name: 'Access tokens' }).click();
    await page.getByText('No tokens').waitFor();
    await page.getByRole('button', { name: 'New token' }).click();
    const dlg = page.getByRole('dialog', { name: 'New access token' });
    await dlg.getByLabel('Name').fill('github-deploy');
    await dlg.getByRole('button', { name: 'deploy', exact: true }).click();
    await dlg.getByLabel('Project').selectOption({ label: 'billing' });
    await dlg.getByRole('checkbox', { name: 'Every environment' }).uncheck();
    await dlg.getByRole('checkbox', { name: 'prod' }).check();
    await dlg.getByLabel('Expires').selectOption({ label: '30 days' });
    await dlg.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.getByTestId('once-secret').textContent())!;
    expect(token).toMatch(/^tok_live_/);

    const pull = (tok: string) =>
      run(cliBinary, ['pull', '--stdout'], {
        env: {
          PATH: process.env.PATH,
          HOME: '/nonexistent',
          SVCENV_TOKEN: tok,
          SVCENV_PROJECT: project.id,
          SVCENV_ENV: 'prod',
          SVCENV_API_URL: server.url,
        },
      });
    expect((await pull(token)).stdout).toContain('STRIPE_KEY=sk_live_abc123');

    await page.getByRole('button', { name: 'I have saved it' }).click();
    const row = page.getByRole('row', { name: /github-deploy/ });
    await expect.poll(() => row.textContent()).toContain(token.slice(0, 16));
    await expect.poll(() => row.textContent()).toContain('deploy');

    await page.getByRole('button', { name: 'Rotate github-deploy' }).click();
    const rotated = (await page.getByTestId('once-secret').textContent())!;
    expect(rotated).not.toBe(token);
    await expect(pull(token)).rejects.toMatchObject({ code: 1 });
    expect((await pull(rotated)).stdout).toContain('STRIPE_KEY=sk_live_abc123');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await expect.poll(() => row.textContent()).toContain('just now');

    await screenshot(page, 'tokens');
    await page.getByRole('button', { name: 'Revoke github-deploy' }).click();
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByText('No tokens').waitFor();
    await expect(pull(rotated)).rejects.toMatchObject({ code: 1 });
    expect(problems).toEqual([]);
    await context.close();
  });

  it('invites a new person by email; the emailed link lets them sign up and join', async () => {
    const owner = await signupUser(server, 'Hopper');
    const owned = await createProject(server, owner.jwt, { name: 'shared-svc' });
    const { page, context } = await openTab(browser, server.url);
    await login(page, owner.email, owner.password);
    await page.getByRole('link', { name: 'Team' }).click();
    const invitee = `lin-${Date.now()}@example.test`;
    await page.getByLabel('Email').fill(invitee);
    await page.getByRole('button', { name: 'Send invite' }).click();
    await page.getByRole('cell', { name: invitee }).waitFor();
    // Grant the invitee's future membership nothing yet; Owner sees the pending invite.
    const mail = await smtp.waitFor(invitee);
    const link = /https?:\/\/\S+\/invite\?token=[\w-]+/.exec(mail.text)?.[0];
    expect(link).toBeTruthy();

    const guest = await openTab(browser, server.url, 390);
    await guest.page.goto(link!.replace(/^https?:\/\/[^/]+/, ''));
    await guest.page.getByRole('heading', { name: /^Join / }).waitFor(); // ADR 0012: the page names the workspace
    await guest.page.getByLabel('Your name').fill('Lin');
    await guest.page.getByLabel('Work email').fill(invitee);
    await guest.page.getByLabel('Password').fill('another good password');
    await guest.page.getByRole('button', { name: 'Create account' }).click();
    await guest.page.getByRole('button', { name: 'Accept invitation' }).click();
    await guest.page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
    await expect.poll(() => guest.page.locator('.ws-name').textContent()).toBe("Hopper's workspace");
    // A Member sees only projects they were added to (D23); with none yet, who can give them access.
    await guest.page.getByRole('heading', { name: "You were added to Hopper's workspace" }).waitFor();
    await expect
      .poll(() => guest.page.getByRole('list', { name: 'Workspace Owners' }).textContent())
      .toContain('Hopper');

    // The Owner gives them the project as Developer, with write on the protected prod as an override.
    await page.reload();
    await page.getByRole('cell', { name: /Lin/ }).waitFor();
    await screenshot(page, 'team');
    await page.goto(`/projects/${owned.id}?tab=members`);
    await page.getByLabel('Workspace member').selectOption({ label: `Lin (${invitee})` });
    await page.getByLabel('Project role').selectOption('Developer');
    await page.getByRole('button', { name: 'Add to project' }).click();
    const prodCell = page.getByLabel('Lin on prod');
    await expect.poll(() => prodCell.locator('option:checked').textContent()).toBe('default · none');
    await prodCell.selectOption('write');
    await expect.poll(() => prodCell.evaluate((el) => el.classList.contains('perm-override'))).toBe(true);
    await screenshot(page, 'project-members');
    // The workspace audit log records it, filterable by action.
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Filter by action').selectOption('env_permission.set');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    await page.getByLabel('Filter by action').selectOption('');
    await screenshot(page, 'audit');
    await context.close();

    await guest.page.reload();
    await guest.page.getByRole('link', { name: /shared-svc/ }).waitFor();
    expect(guest.problems).toEqual([]);
    await screenshot(guest.page, 'invite-accepted-390');
    await guest.context.close();
  });

  // Pending on main until the account-security work lands (/v1/me/mfa/*, D12): skipped, with this note, while
  // the server answers 404 there; it runs unchanged once the endpoints exist.
  it('sets up two-factor with the QR code and backup codes, then logs in with a code', async (ctx) => {
    const user = await signupUser(server, 'Turing');
    const probe = await server.request('POST', '/v1/me/mfa/setup', { token: user.jwt });
    if (probe.status === 404) return ctx.skip('pending: POST /v1/me/mfa/setup is not on this server yet (D12)');
    const { page, context, problems } = await openTab(browser, server.url);
    await login(page, user.email, user.password);
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Set up two-factor' }).click();
    const secret = (await page.getByTestId('mfa-secret').textContent())!.trim();
    await expect
      .poll(() => page.getByAltText('QR code for your authenticator app').getAttribute('src'))
      .toMatch(/^data:image\/png/);
    await page.getByLabel('Code from the app').fill('000000');
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('alert').waitFor(); // a wrong code is refused with the server's message
    await screenshot(page, 'two-factor-setup-wrong-code');
    await page.getByLabel('Code from the app').fill(totp(secret));
    await page.getByRole('button', { name: 'Turn on' }).click();
    // allTextContents does not wait: the codes list appears once the server has answered.
    await page.getByTestId('backup-codes').waitFor();
    const codes = await page.getByTestId('backup-codes').locator('code').allTextContents();
    expect(codes).toHaveLength(10);
    await screenshot(page, 'two-factor-backup-codes');
    await page.getByRole('button', { name: 'Done, log in again' }).click();

    // Log in: password, then the second step. The enabling code's step is spent (D13), so use the next one.
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByLabel('Authentication code').fill(totp(secret, Date.now() + 30_000));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Log out' }).click();
    // A backup code works once.
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByLabel('Authentication code').fill(codes[0]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
    expect(problems).toEqual([]);
    await screenshot(page, 'two-factor-login');
    await context.close();
  });

  // Pending on main until the account-security work lands (verify-email D11, /v1/me/workspaces D12): skipped,
  // with this note, while the server answers 404 there; it runs unchanged once the endpoints exist.
  it('verifies the email from the emailed link and switches between workspaces', async (ctx) => {
    const other = await signupUser(server, 'Owner');
    const probe = await server.request('GET', '/v1/me/workspaces', { token: other.jwt });
    if (probe.status === 404)
      return ctx.skip('pending: GET /v1/me/workspaces and verify-email are not on this server yet');
    const { page, context, problems } = await openTab(browser, server.url);
    const email = `noor-${Date.now()}@example.test`;
    await page.goto('/signup');
    await page.getByLabel('Your name').fill('Noor');
    await page.getByLabel('Work email').fill(email);
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Please verify your email address').waitFor();
    const mail = await smtp.waitFor(email, (m) => m.text.includes('/verify-email?token='));
    const link = /https?:\/\/\S+\/verify-email\?token=[\w-]+/.exec(mail.text)![0];
    await page.goto(link.replace(/^https?:\/\/[^/]+/, ''));
    await page.getByText('Your email address is verified.').waitFor();
    await page.getByRole('button', { name: 'Go to your projects' }).click();
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
    expect(await page.getByText('Please verify your email address').count()).toBe(0);

    // An existing account invited elsewhere is added at once (spec); the switcher lists both workspaces.
    const added = await server.request('POST', '/v1/workspace/invites', {
      token: other.jwt,
      body: { email, wsRole: 'Member' },
    });
    expect(added.status).toBe(200);
    await page.getByRole('button', { name: "Noor's workspace" }).click();
    await page.getByRole('menuitem', { name: /Owner's workspace/ }).click();
    await expect.poll(() => page.locator('.ws-name').textContent()).toBe("Owner's workspace");
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
    await page.getByRole('button', { name: "Owner's workspace" }).click();
    await page.getByRole('menuitem', { name: /Noor's workspace/ }).waitFor();
    expect(problems).toEqual([]);
    await screenshot(page, 'workspace-switcher');
    await context.close();
  });

  // Pending on main until the events work lands (/v1/workspace/webhooks*, D35): skipped, with this note, while
  // the server answers 404 there; it runs unchanged once the endpoints exist.
  it('creates a webhook, shows its secret once, sends a test ping and lists the delivery', async (ctx) => {
    const owner = await signupUser(server, 'Liskov');
    const probe = await server.request('GET', '/v1/workspace/webhooks', { token: owner.jwt });
    if (probe.status === 404) return ctx.skip('pending: /v1/workspace/webhooks is not on this server yet (D35)');
    const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/svcenv`;
    try {
      const { page, context, problems } = await openTab(browser, server.url);
      await login(page, owner.email, owner.password);
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByText('No webhooks').waitFor();
      await page.getByRole('button', { name: 'New webhook' }).click();
      const dlg = page.getByRole('dialog', { name: 'New webhook' });
      await dlg.getByLabel('Name').fill('deploy-bot');
      await dlg.getByLabel('URL').fill(url);
      // A new webhook starts with every change event and without pulls, as the server's default (ADR 0004).
      for (const ev of WEBHOOK_EVENTS) {
        expect(await dlg.getByRole('checkbox', { name: ev, exact: true }).isChecked(), ev).toBe(ev !== 'vars.pull');
      }
      await dlg.getByRole('checkbox', { name: 'vars.pull' }).check();
      await dlg.getByRole('button', { name: 'Create webhook' }).click();
      const secret = (await page.getByTestId('once-secret').textContent())!;
      expect(secret).toMatch(/^whsec_/);
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await page.getByRole('button', { name: 'Send test' }).click();
      await expect.poll(() => received.length, { timeout: 15_000 }).toBeGreaterThan(0);
      const { createHmac } = await import('node:crypto');
      const first = received[0]!;
      expect(first.headers['x-svcenv-signature']).toBe(
        `sha256=${createHmac('sha256', secret).update(first.body).digest('hex')}`,
      );
      expect(JSON.parse(first.body).event).toBe('ping');

      await page.getByRole('button', { name: 'Deliveries' }).click();
      const log = page.getByRole('dialog', { name: 'Deliveries of deploy-bot' });
      await expect
        .poll(
          async () => {
            await log.getByRole('button', { name: 'Refresh' }).click();
            return log.getByTestId('deliveries').textContent();
          },
          { timeout: 15_000 },
        )
        .toContain('204');
      await expect.poll(() => log.getByTestId('deliveries').textContent()).toContain('ping');
      await screenshot(page, 'webhook-deliveries');
      await log.getByRole('button', { name: 'Close' }).click();
      // Pause it from the list.
      await page.getByRole('checkbox', { name: 'deploy-bot active' }).uncheck();
      await page.getByText('paused').waitFor();
      expect(problems).toEqual([]);
      await screenshot(page, 'webhooks');
      await context.close();
    } finally {
      receiver.close();
    }
  });

  it('works with the keyboard alone at 390 px: menu, dialog, form', async () => {
    const user = await signupUser(server, 'Kay');
    const project = await createProject(server, user.jwt, { name: 'mobile-app', color: '#ec4899' });
    await upsert(
      server,
      user.jwt,
      project.id,
      ['dev'],
      [
        { key: 'API_URL', value: 'https://api.example.com', type: 'plain' },
        { key: 'SENTRY_DSN', value: 'https://k@sentry.example/1', type: 'secret' },
      ],
    );
    const { page, context, problems } = await openTab(browser, server.url, 390);
    await login(page, user.email, user.password);
    // The sidebar is behind the menu button on a phone.
    await page.getByRole('button', { name: 'Menu' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Projects' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: /mobile-app/ }).focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('value-API_URL').waitFor();
    // A dialog opens with the keyboard, traps focus, and Escape closes it.
    await page.getByRole('button', { name: 'Import .env' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'Import variables' }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('TEXTAREA');
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    // Focus goes back to the opener as the dialog closes, never a frame later: a field focused right after
    // the dialog has gone keeps it (Preact runs a passive effect's cleanup after paint; CI lost a run to it).
    await page.getByRole('button', { name: 'Import .env' }).click();
    await page.getByRole('dialog', { name: 'Import variables' }).waitFor();
    const kept = await page.evaluate(async () => {
      document.querySelector('dialog')?.dispatchEvent(new Event('cancel', { cancelable: true }));
      await Promise.resolve(); // the re-render that removes the dialog is a microtask
      if (document.querySelector('dialog')) return 'dialog still there';
      document.querySelector<HTMLElement>('[aria-label="New key"]')?.focus();
      await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 100)));
      return document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent;
    });
    expect(kept).toBe('New key');
    // Add a variable from the keyboard: type, Tab, type, Enter. Each step is checked before the next, so a
    // keystroke that went elsewhere fails here, naming the step, not as a missing row ten seconds later.
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? null);
    await page.getByLabel('New key').focus();
    await expect.poll(focused).toBe('New key');
    await page.keyboard.type('LOG_LEVEL');
    await expect.poll(() => page.getByLabel('New key').inputValue()).toBe('LOG_LEVEL');
    await page.keyboard.press('Tab');
    await expect.poll(focused).toBe('New value');
    await page.keyboard.type('debug');
    await expect.poll(() => page.getByLabel('New value').inputValue()).toBe('debug');
    await page.keyboard.press('Enter');
    // The form answers with the new row, or with an error it shows: either way the test says which.
    const added = page.getByTestId('value-LOG_LEVEL');
    const refused = page.getByRole('form', { name: 'Add a variable' }).getByRole('alert');
    await added.or(refused).first().waitFor();
    expect(await refused.count(), (await refused.allTextContents()).join(' ')).toBe(0);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'project-390');

    // Rename, then delete with the typed confirmation (Owner).
    await page.getByRole('button', { name: 'Edit project' }).click();
    await page.getByLabel('Name').fill('mobile-app-v2');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'mobile-app-v2' }).waitFor();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete project' });
    await expect(confirm.getByRole('button', { name: 'Delete project' }).isDisabled()).resolves.toBe(true);
    await confirm.getByLabel('Type mobile-app-v2 to confirm').fill('mobile-app-v2');
    await confirm.getByRole('button', { name: 'Delete project' }).click();
    await page.getByText('No projects yet').waitFor();
    expect((await server.request('GET', `/v1/projects/${project.id}`, { token: user.jwt })).status).toBe(404);
    expect(problems).toEqual([]);
    await context.close();
  });
});
