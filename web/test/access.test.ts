/**
 * The dashboard shows only what the user may do (D57): a Developer with read on staging and none on prod is
 * never offered a control the server would refuse, at desktop and phone widths; an environment they cannot
 * open (a link to it, or access withdrawn while the page was open) is one card with the request form filled in
 * (D74), not an error; an Admin is offered the project's controls; and the free plan's limits name their
 * remedy (D15). Debian's chromium against the real server; screenshots go to test-artifacts/.
 */
import { project as projectSchema, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer, upsert } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

/** Controls that change an environment's variables: the server answers 403 to each without write. */
const WRITE_CONTROLS = [
  { role: 'button', name: 'Add', exact: true },
  { role: 'button', name: 'Import .env' },
  { role: 'button', name: 'Reveal all' },
  { role: 'button', name: /^Edit [A-Z_]+$/ },
  { role: 'button', name: /^Delete [A-Z_]+$/ },
  { role: 'button', name: /^Reveal [A-Z_]+$/ },
  { role: 'button', name: /^Type (secret|plain); switch/ },
  { role: 'checkbox', name: /^Select / },
  { role: 'textbox', name: 'New key' },
] as const;
/** Project administration (Owner or project Admin) and Owner-only controls. */
const ADMIN_CONTROLS = [
  { role: 'button', name: 'Edit project' },
  { role: 'button', name: 'Delete environment' },
  { role: 'button', name: '+ Add environment' },
  { role: 'tab', name: 'Members' },
  { role: 'tab', name: 'Audit log' },
  // D70: connections are the project administrators'.
  { role: 'tab', name: 'Connections' },
] as const;
const OWNER_CONTROLS = [
  { role: 'button', name: 'Protect', exact: true },
  { role: 'button', name: 'Unprotect', exact: true },
  { role: 'button', name: 'Delete', exact: true },
] as const;

type Control = { role: 'button' | 'checkbox' | 'textbox' | 'tab'; name: string | RegExp; exact?: boolean };

describe.skipIf(!chromiumAvailable())('the dashboard offers only what the user may do (D57)', () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let workspaceId: string;
  let projectId: string;
  let devJwt: string;
  let devId: string;
  let adminJwt: string;

  beforeAll(async () => {
    // The free plan (the default): Owner, Developer and Admin are its three members (D15).
    [server, browser] = await Promise.all([startServer({ env: { LOG_LEVEL: 'warn' } }), launch()]);
    owner = await signupUser(server, 'Owner');
    const session = await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    workspaceId = session.body.user.workspaceId;
    const p = await createProject(server, owner.jwt, { name: 'shop', envs: ['dev', 'staging', 'prod'] });
    projectId = p.id;
    const items = [
      { key: 'API_URL', value: 'https://api.example.com', type: 'plain' },
      { key: 'DB_PASSWORD', value: 'hunter2-staging', type: 'secret' },
    ];
    await upsert(server, owner.jwt, projectId, ['dev', 'staging', 'prod'], items);

    const member = async (name: string, role: 'Admin' | 'Developer') => {
      const u = await signupUser(server, name);
      const inv = await server.request('POST', '/v1/workspace/invites', {
        token: owner.jwt,
        body: { email: u.email, wsRole: 'Member' },
      });
      expect(inv.status).toBe(200);
      const sw = await server.request('POST', '/v1/auth/switch-workspace', {
        token: u.jwt,
        body: { workspaceId },
        schema: switchWorkspaceResponse,
      });
      const added = await server.request('PUT', `/v1/projects/${projectId}/members/${u.user.id}`, {
        token: owner.jwt,
        body: { role },
      });
      expect(added.status).toBe(200);
      return { id: u.user.id, jwt: sw.body.token };
    };
    const dev = await member('Dev', 'Developer');
    devJwt = dev.jwt;
    devId = dev.id;
    adminJwt = (await member('Admin', 'Admin')).jwt;
    // prod is protected (none for a Developer by default); staging is lowered to read.
    const o = await server.request('PUT', `/v1/projects/${projectId}/members/${devId}/envs/staging`, {
      token: owner.jwt,
      body: { permission: 'read' },
    });
    expect(o.status).toBe(200);
    const seen = await server.request('GET', `/v1/projects/${projectId}`, { token: devJwt, schema: projectSchema });
    expect(seen.body.access.envs).toEqual({ dev: 'write', staging: 'read', prod: 'none' });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** A tab signed in with `jwt` (the session cookie, ADR 0014). */
  async function signedIn(jwt: string, width: number) {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, jwt);
    return tab;
  }
  const count = (page: Page, c: Control) =>
    page.getByRole(c.role, { name: c.name, ...(c.exact ? { exact: true } : {}) }).count();
  async function expectNone(page: Page, controls: readonly Control[], where: string) {
    for (const c of controls) expect(await count(page, c), `${String(c.name)} ${where}`).toBe(0);
  }
  async function expectAll(page: Page, controls: readonly Control[], where: string) {
    for (const c of controls) expect(await count(page, c), `${String(c.name)} ${where}`).toBeGreaterThan(0);
  }

  for (const width of [1280, 390]) {
    it(`a Developer with read on staging and none on prod sees no control the server would refuse (${width} px)`, async () => {
      const { page, context, problems } = await signedIn(devJwt, width);
      // Asked for prod and the members tab by URL: neither is offered, so the page falls back.
      await page.goto(`/projects/${projectId}?tab=members&env=prod`);
      await page.getByRole('heading', { name: 'shop' }).waitFor();
      await page.getByTestId('value-API_URL').waitFor();
      expect(await page.getByRole('tab', { name: /prod/ }).count()).toBe(0);
      await expect.poll(() => page.getByTestId('hidden-envs').textContent()).toContain('no access to prod');
      // The link was to prod: one card that says so, its request form filled in, and no error beside it.
      await expectNoAccessCard(page, 'prod');
      expect(await page.getByRole('button', { name: 'Request access' }).count()).toBe(0);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      await screenshot(page, `access-no-access-prod-${width}`);
      await expectNone(page, [...ADMIN_CONTROLS, ...OWNER_CONTROLS], 'for a Developer');
      // dev: write, so its controls are there.
      expect(await page.getByRole('tab', { name: 'dev', selected: true }).count()).toBe(1);
      await expectAll(page, WRITE_CONTROLS.slice(0, 5), 'on dev');

      await page.getByRole('tab', { name: 'staging' }).click();
      await expect
        .poll(() => page.getByTestId('read-only-note').textContent())
        .toBe(
          'You have read access to staging: values are masked here, and a read token you create pulls them in plain text. Ask a project Admin for write to reveal or change them.',
        );
      await page.getByTestId('value-DB_PASSWORD').waitFor();
      expect(await page.getByTestId('value-DB_PASSWORD').textContent()).toBe('••••••••');
      await expectNone(page, [...WRITE_CONTROLS, ...ADMIN_CONTROLS, ...OWNER_CONTROLS], 'on staging');
      expect(await page.getByLabel('Colour of staging').count()).toBe(0);
      // Reading is allowed: the history opens, masked, without a Restore button.
      await page.getByRole('button', { name: 'History of DB_PASSWORD' }).click();
      const history = page.getByRole('dialog', { name: 'History of DB_PASSWORD' });
      await history.getByText('Secret values are masked').waitFor();
      expect(await history.getByRole('button', { name: /Restore/ }).count()).toBe(0);
      await history.getByRole('button', { name: 'Close' }).click();
      // Export offers only the masked file (values need write).
      await page.getByRole('button', { name: 'Export ▾' }).click();
      expect(await page.getByRole('menuitem').allTextContents()).toEqual(['.env (secrets masked)']);
      await page.getByRole('button', { name: 'Export ▾' }).click();
      if (width < 600) {
        const overflow = await page.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
        expect(overflow).toBeLessThanOrEqual(0);
      }
      await screenshot(page, `access-developer-staging-${width}`);
      // Compare offers the two environments the Developer can read.
      await page.getByRole('tab', { name: 'Compare' }).click();
      expect(await page.getByLabel('Environment A').locator('option').allTextContents()).toEqual(['dev', 'staging']);
      expect(problems).toEqual([]);
      await context.close();
    });
  }

  /**
   * Exactly one card "You cannot open <env>" with the request form filled in (the environment, read, 1 hour),
   * no refusal shown as an error, and the environment not offered as a tab.
   */
  async function expectNoAccessCard(page: Page, env: string) {
    const card = page.getByTestId('no-access');
    await expect.poll(() => card.count(), { timeout: 5000 }).toBe(1);
    expect(await card.getByRole('heading').allTextContents()).toEqual([`You cannot open ${env}`]);
    expect(await page.getByText(`You cannot open ${env}`).count()).toBe(1);
    const form = card.getByTestId('request-form');
    expect(await form.getByLabel('Environment').inputValue()).toBe(env);
    expect(await form.getByLabel('Permission').inputValue()).toBe('read');
    expect(await form.getByLabel('For').inputValue()).toBe('3600');
    expect(await form.getByLabel('Reason').inputValue()).toBe('');
    expect(await form.getByRole('button', { name: 'Send request' }).isDisabled()).toBe(true);
    await expect.poll(() => page.getByRole('alert').count(), { timeout: 5000 }).toBe(0);
    expect(await page.getByRole('tab', { name: env, exact: true }).count()).toBe(0);
    return card;
  }

  it('access withdrawn while the page was open: one card to ask for it, no error and no Retry', async () => {
    const { page, context, problems } = await signedIn(devJwt, 1280);
    await page.goto(`/projects/${projectId}?tab=vars&env=dev`);
    await page.getByTestId('value-API_URL').waitFor();
    const revoke = await server.request('PUT', `/v1/projects/${projectId}/members/${devId}/envs/staging`, {
      token: owner.jwt,
      body: { permission: 'none' },
    });
    expect(revoke.status).toBe(200);
    try {
      await page.getByRole('tab', { name: 'staging' }).click();
      // The refusal re-reads the access: staging is now closed, said once, with the form to ask again.
      const card = await expectNoAccessCard(page, 'staging');
      expect(await page.getByRole('button', { name: 'Retry' }).count()).toBe(0);
      expect(await page.getByTestId('hidden-envs').textContent()).toContain('staging');
      // The page's earlier "read access" note would contradict the refusal.
      expect(await page.getByTestId('read-only-note').count()).toBe(0);
      await screenshot(page, 'access-forbidden-card-1280');
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForTimeout(600);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
      await screenshot(page, 'access-forbidden-card-390');
      await page.setViewportSize({ width: 1280, height: 860 });
      // Sent from the card as filled in: the request is read on staging for 1 hour; then withdrawn.
      await card.getByLabel('Reason').fill('Reading the staging config');
      await card.getByRole('button', { name: 'Send request' }).click();
      await card.getByTestId('request-pending').waitFor();
      const mine = await server.request('GET', `/v1/projects/${projectId}/access-requests`, { token: devJwt });
      const asked = (
        mine.body as { accessRequests: { env: string; permission: string; durationSeconds: number; status: string }[] }
      ).accessRequests;
      expect(asked.filter((r) => r.status === 'pending')).toEqual([
        expect.objectContaining({ env: 'staging', permission: 'read', durationSeconds: 3600 }),
      ]);
      await card.getByRole('button', { name: 'Withdraw' }).click();
      await card.getByTestId('request-form').waitFor();
      expect(problems.filter((p) => !/403/.test(p))).toEqual([]);
    } finally {
      await server.request('PUT', `/v1/projects/${projectId}/members/${devId}/envs/staging`, {
        token: owner.jwt,
        body: { permission: 'read' },
      });
      await context.close();
    }
  });

  for (const width of [1280, 390]) {
    it(`an Admin is offered the project's controls, not the Owner's (${width} px)`, async () => {
      const { page, context, problems } = await signedIn(adminJwt, width);
      await page.goto(`/projects/${projectId}?env=prod`);
      await page.getByTestId('value-DB_PASSWORD').waitFor();
      expect(await page.getByRole('tab', { name: /prod/, selected: true }).count()).toBe(1);
      expect(await page.getByTestId('read-only-note').count()).toBe(0);
      expect(await page.getByTestId('hidden-envs').count()).toBe(0);
      await expectAll(page, [...WRITE_CONTROLS, ...ADMIN_CONTROLS], 'for an Admin');
      expect(await page.getByLabel('Colour of prod').count()).toBe(1);
      await expectNone(page, OWNER_CONTROLS, 'for an Admin');
      await page.getByRole('button', { name: 'Reveal DB_PASSWORD' }).click();
      await expect.poll(() => page.getByTestId('value-DB_PASSWORD').textContent()).toBe('hunter2-staging');
      expect(problems).toEqual([]);
      await screenshot(page, `access-admin-prod-${width}`);
      await context.close();
    });
  }

  for (const width of [1280, 390]) {
    it(`the free plan's limits name their remedy, in Settings and when one is hit (${width} px)`, async () => {
      const { page, context, problems } = await signedIn(owner.jwt, width);
      await page.goto('/settings');
      const lift = page.getByTestId('lift-limits');
      // The Owner made the instance's first account: its administrator, sent to the Instance page (D69).
      await expect.poll(() => lift.textContent()).toContain('Instance page');
      expect(await lift.textContent()).toContain('DEFAULT_PLAN=team');
      await lift.scrollIntoViewIfNeeded();
      await screenshot(page, `access-settings-plan-${width}`);
      // The 4th environment of a free workspace: the dialog shows the server's message with the remedy.
      await page.goto(`/projects/${projectId}`);
      await page.getByRole('button', { name: '+ Add environment' }).click();
      const dlg = page.getByRole('dialog', { name: 'Add environment' });
      await dlg.getByLabel('Name').fill('qa');
      await dlg.getByRole('button', { name: 'Add environment' }).click();
      const alert = dlg.getByRole('alert');
      await expect.poll(() => alert.textContent()).toContain('the free plan allows at most 3 environments per project');
      expect(await alert.textContent()).toContain('set-plan <workspace> team|enterprise');
      expect(await alert.getByRole('button', { name: 'Retry' }).count()).toBe(0);
      expect(problems).toEqual([]);
      await screenshot(page, `access-plan-limit-${width}`);
      await context.close();
    });
  }
});
