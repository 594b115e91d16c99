/**
 * D73 temporary grants, D74 access requests and D76 who has access, in the dashboard: a project Admin grants
 * a temporary environment permission, sees its time left, extends and ends it; a Developer requests prod,
 * the Admin approves from the inbox for 1 hour and the Developer opens prod; a denial; the access list's
 * sources. Debian's chromium against the real server; screenshots at 1280 and 390 px in /tmp/shots-web43/.
 */
import { mkdirSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { projectMembersResponse, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

const SHOTS = process.env.SHOTS_DIR ?? '/tmp/shots-web43';

describe.skipIf(!chromiumAvailable())('temporary access, access requests and who has access', () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let workspaceId: string;
  let admin: { id: string; jwt: string };
  let dev: { id: string; jwt: string };

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ env: { LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' } }),
      launch(),
    ]);
    owner = await signupUser(server, 'Olivia');
    const session = await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    workspaceId = session.body.user.workspaceId;
    admin = await join('Ada');
    dev = await join('Dev');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function join(name: string) {
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
    return { id: u.user.id, jwt: sw.body.token };
  }
  async function signedIn(jwt: string, width = 1280) {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, jwt);
    return tab;
  }
  async function project(name: string) {
    const p = await createProject(server, owner.jwt, { name: `${name}-${Date.now()}`, envs: ['dev', 'prod'] });
    for (const [u, role] of [
      [admin.id, 'Admin'],
      [dev.id, 'Developer'],
    ] as const) {
      const r = await server.request('PUT', `/v1/projects/${p.id}/members/${u}`, { token: owner.jwt, body: { role } });
      expect(r.status).toBe(200);
    }
    return p;
  }
  async function devOnServer(projectId: string) {
    const res = await server.request('GET', `/v1/projects/${projectId}/members`, {
      token: owner.jwt,
      schema: projectMembersResponse,
    });
    return res.body.members.find((m) => m.userId === dev.id)!;
  }
  /** The page at 1280 and 390 px, into /tmp/shots-web43/ and test-artifacts/; no sideways scroll at 390. */
  async function shots(page: Page, name: string) {
    mkdirSync(SHOTS, { recursive: true });
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width < 600 ? 844 : 860 });
      // Past the sidebar's slide when the width crosses the phone layout.
      await page.waitForTimeout(600);
      await page.evaluate(() => scrollTo(0, 0));
      await page.screenshot({ path: pathJoin(SHOTS, `${name}-${width}.png`), fullPage: true });
      if (width < 600) {
        expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} at 390`).toBeLessThanOrEqual(
          width,
        );
      }
    }
    await page.setViewportSize({ width: 1280, height: 860 });
    await screenshot(page, `temporary-access-${name}`);
  }

  it('an Admin grants a temporary env permission, sees its time left, extends and ends it', async () => {
    const p = await project('temp-grants');
    const a = await signedIn(admin.jwt);
    await a.page.goto(`/projects/${p.id}?tab=members`);
    await a.page.getByTestId('grant-duration').getByLabel('New grants last').selectOption('1h');
    await a.page.getByLabel('Dev on prod').selectOption('read');
    const cell = a.page.getByLabel('Dev on prod').locator('xpath=..');
    await expect
      .poll(() =>
        cell
          .getByTestId('time-left')
          .textContent()
          .catch(() => ''),
      )
      .toMatch(/ends in (60 min|1 h)/);
    expect(await cell.getByTestId('time-left').getAttribute('title')).toMatch(/^Ends /);
    const first = Date.parse((await devOnServer(p.id)).envPermissionExpiry.prod!);
    expect(first - Date.now()).toBeGreaterThan(50 * 60_000);
    expect(first - Date.now()).toBeLessThanOrEqual(3600_000);
    await shots(a.page, 'members-temporary');

    await cell.getByRole('button', { name: /^Extend .* by 1 day$/ }).click();
    await expect
      .poll(async () => Date.parse((await devOnServer(p.id)).envPermissionExpiry.prod ?? '0') - first)
      .toBeGreaterThan(86_000_000);

    await cell.getByRole('button', { name: /End .* now/ }).click();
    await a.page.getByRole('dialog').getByRole('button', { name: 'End now' }).click();
    await expect.poll(async () => (await devOnServer(p.id)).envPermissions.prod ?? 'default').toBe('default');
    expect(a.problems).toEqual([]);
    await a.context.close();
  });

  it('the Team page: an Owner makes someone Owner for a day, sees the time left, ends it', async () => {
    const o = await signedIn(owner.jwt);
    await o.page.goto('/team');
    await o.page.getByTestId('grant-duration').getByLabel('Role changes last').selectOption('1d');
    await o.page.getByLabel('Role of Ada').selectOption('Owner');
    const row = o.page.getByRole('row').filter({ hasText: 'Ada' });
    await expect
      .poll(() =>
        row
          .getByTestId('time-left')
          .textContent()
          .catch(() => ''),
      )
      .toMatch(/ends in (24 h|1 day)/);
    await shots(o.page, 'team-temporary');
    await row.getByRole('button', { name: /End .* now/ }).click();
    await o.page.getByRole('dialog').getByRole('button', { name: 'End now' }).click();
    await expect.poll(() => row.getByTestId('time-left').count()).toBe(0);
    expect(await o.page.getByLabel('Role of Ada').inputValue()).toBe('Member');
    await o.context.close();
  });

  it('a Developer requests prod; the Admin approves from the inbox for 1 hour; the Developer opens prod', async () => {
    const p = await project('requests');
    const d = await signedIn(dev.jwt);
    await d.page.goto(`/projects/${p.id}?env=prod`);
    // The link was to prod: its card, the form filled in but for the reason and the duration chosen here.
    const prodCard = d.page.getByTestId('no-access');
    await prodCard.getByRole('heading', { name: 'You cannot open prod' }).waitFor();
    expect(await prodCard.getByLabel('Permission').inputValue()).toBe('read');
    await prodCard.getByLabel('For').selectOption(String(86_400));
    await prodCard.getByLabel('Reason').fill('Debugging the checkout outage');
    await shots(d.page, 'request-form');
    await prodCard.getByRole('button', { name: 'Send request' }).click();
    await prodCard.getByTestId('request-pending').waitFor();
    await shots(d.page, 'request-pending');

    const a = await signedIn(admin.jwt);
    await a.page.goto('/projects');
    await expect
      .poll(() =>
        a.page
          .getByTestId('inbox-count')
          .textContent()
          .catch(() => ''),
      )
      .toBe('1');
    await a.page
      .getByRole('link', { name: /Access requests/ })
      .first()
      .click();
    const card = a.page.getByTestId('access-request').filter({ hasText: 'Debugging the checkout outage' });
    await card.waitFor();
    expect(await card.textContent()).toContain('Dev');
    expect(await card.getByRole('button', { name: /^Approve/ }).allTextContents()).toEqual([
      'Approve 1 h',
      'Approve 1 day (asked)',
    ]);
    await shots(a.page, 'inbox');
    await card.getByRole('button', { name: 'Approve 1 h' }).click();
    await a.page.getByTestId('decided-requests').getByText('approved').waitFor();
    await shots(a.page, 'inbox-decided');

    await d.page.goto(`/projects/${p.id}?env=prod`);
    await d.page.getByRole('tab', { name: /prod/ }).first().waitFor();
    expect(await d.page.getByTestId('no-access').count()).toBe(0);

    // Who has access to prod: the Owner by being one, the Admin by role, the Developer by the request.
    await a.page.goto(`/projects/${p.id}?tab=members`);
    const list = a.page.getByTestId('env-access');
    await list.getByLabel('Environment').selectOption('prod');
    const source = (name: string) =>
      list
        .getByTestId('access-row')
        .filter({ hasText: new RegExp(`^${name}`) })
        .locator('[data-source]')
        .getAttribute('data-source');
    await expect.poll(() => source('Dev').catch(() => null)).toBe('request');
    expect(await source('Olivia')).toBe('owner');
    expect(await source('Ada')).toBe('role');
    const link = list
      .getByTestId('access-row')
      .filter({ hasText: 'Dev' })
      .getByRole('link', { name: 'access request' });
    expect(await link.getAttribute('href')).toMatch(/^\/access-requests\?request=/);
    await shots(a.page, 'access-list');

    // The same list from the environment itself: "Who has access" in prod's settings on the variables view,
    // for the Admin; the Developer, who may not ask for it, is not offered it (D76, no surprise 403).
    await a.page.goto(`/projects/${p.id}?env=prod`);
    await a.page
      .getByRole('region', { name: 'Settings of prod' })
      .getByRole('button', { name: 'Who has access' })
      .click();
    const dialog = a.page.getByRole('dialog', { name: 'Who has access to prod' });
    const inDialog = (name: string) =>
      dialog
        .getByTestId('access-row')
        .filter({ hasText: new RegExp(`^${name}`) })
        .locator('[data-source]')
        .getAttribute('data-source');
    await expect.poll(() => inDialog('Dev').catch(() => null)).toBe('request');
    expect(await inDialog('Ada')).toBe('role');
    await shots(a.page, 'env-who-has-access');
    await d.page.goto(`/projects/${p.id}?env=prod`);
    await d.page.getByRole('region', { name: 'Variables of prod' }).waitFor();
    expect(await d.page.getByRole('button', { name: 'Who has access' }).count()).toBe(0);
    expect(d.problems).toEqual([]);
    expect(a.problems).toEqual([]);
    await d.context.close();
    await a.context.close();
  });

  it('a denial with a reason; the requester sees no buttons on their own request; withdraw', async () => {
    const p = await project('deny');
    const ask = await server.request('POST', `/v1/projects/${p.id}/access-requests`, {
      token: dev.jwt,
      body: { env: 'prod', permission: 'write', durationSeconds: 3600, reason: 'Hotfix' },
    });
    expect(ask.status).toBe(201);
    const a = await signedIn(admin.jwt);
    await a.page.goto('/access-requests');
    const card = a.page.getByTestId('access-request').filter({ hasText: 'Hotfix' });
    await card.waitFor();
    // Only the asked duration: 1 hour is not shorter than asked, 1 day is longer.
    expect(await card.getByRole('button', { name: /^Approve/ }).allTextContents()).toEqual(['Approve 1 h (asked)']);
    await card.getByRole('button', { name: 'Deny' }).click();
    await a.page
      .getByRole('dialog')
      .getByLabel(/Reason/)
      .fill('Use staging');
    await a.page.getByRole('dialog').getByRole('button', { name: 'Deny' }).click();
    await a.page.getByTestId('decided-requests').getByText('Use staging').waitFor();
    // The Developer sees the no, with its reason, beside Request access.
    const d = await signedIn(dev.jwt);
    await d.page.goto(`/projects/${p.id}`);
    const denied = d.page.getByTestId('request-access').locator('li[data-env="prod"]').getByTestId('request-denied');
    await expect.poll(() => denied.textContent().catch(() => '')).toContain('Use staging');
    await shots(d.page, 'request-denied');

    // The Admin's own request (to another Admin's project) shows "your request", not buttons.
    const q = await createProject(server, owner.jwt, { name: `own-${Date.now()}`, envs: ['dev', 'prod'] });
    await server.request('PUT', `/v1/projects/${q.id}/members/${admin.id}`, {
      token: owner.jwt,
      body: { role: 'Admin' },
    });
    await server.request('PUT', `/v1/projects/${q.id}/members/${admin.id}/envs/prod`, {
      token: owner.jwt,
      body: { permission: 'none' },
    });
    const mine = await server.request('POST', `/v1/projects/${q.id}/access-requests`, {
      token: admin.jwt,
      body: { env: 'prod', permission: 'read', durationSeconds: 3600, reason: 'Own ask' },
    });
    expect(mine.status).toBe(201);
    await a.page.reload();
    const own = a.page.getByTestId('access-request').filter({ hasText: 'Own ask' });
    await own.getByText('your request').waitFor();
    expect(await own.getByRole('button').count()).toBe(0);

    // The Developer withdraws a pending request from the project page.
    const again = await server.request('POST', `/v1/projects/${p.id}/access-requests`, {
      token: dev.jwt,
      body: { env: 'prod', permission: 'read', durationSeconds: 3600, reason: 'Again' },
    });
    expect(again.status).toBe(201);
    await d.page.goto(`/projects/${p.id}`);
    const row = d.page.getByTestId('request-access').locator('li[data-env="prod"]');
    await row.getByRole('button', { name: 'Withdraw' }).click();
    await row.getByRole('button', { name: 'Request access' }).waitFor();
    // A Developer administers nothing: no inbox in the nav.
    expect(await d.page.getByRole('link', { name: /Access requests/ }).count()).toBe(0);
    await a.context.close();
    await d.context.close();
  });
});
