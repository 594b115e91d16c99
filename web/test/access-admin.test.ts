/**
 * The approver's side of D73/D74 in the dashboard: the inbox asks the administered projects six at a time
 * (not all at once, not one by one) and its nav badge follows a decision at once; the Members grid's
 * per-environment columns scroll inside their own box on a phone, with a hint, while the page does not.
 * Debian's chromium against the real server; screenshots in test-artifacts/.
 */
import { sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

describe.skipIf(!chromiumAvailable())('the approver: inbox and members grid', () => {
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
  /** A project (unique name per try) where Ada is Admin and Dev a Developer. */
  async function project(name: string, envs = ['dev', 'prod']) {
    const p = await createProject(server, owner.jwt, { name: `${name}-${Date.now().toString(36)}`, envs });
    for (const [u, role] of [
      [admin.id, 'Admin'],
      [dev.id, 'Developer'],
    ] as const) {
      const r = await server.request('PUT', `/v1/projects/${p.id}/members/${u}`, { token: owner.jwt, body: { role } });
      expect(r.status).toBe(200);
    }
    return p;
  }
  async function signedIn(jwt: string, width = 1280) {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, jwt);
    return tab;
  }

  it('the inbox asks six projects at a time, and its badge follows an approve and a deny at once', async () => {
    const projects: { id: string }[] = [];
    for (let i = 0; i < 9; i++) projects.push(await project(`inbox${i}`));
    for (const [i, reason] of [
      [0, 'Checkout outage'],
      [7, 'Quarterly report'],
    ] as const) {
      const ask = await server.request('POST', `/v1/projects/${projects[i]!.id}/access-requests`, {
        token: dev.jwt,
        body: { env: 'prod', permission: 'read', durationSeconds: 3600, reason },
      });
      expect(ask.status).toBe(201);
    }

    const a = await signedIn(admin.jwt);
    // Every project's list held for a moment: the most held at once is how many the page asks together.
    let inFlight = 0;
    let most = 0;
    const asked = new Set<string>();
    await a.page.route(/\/v1\/projects\/[^/]+\/access-requests(\?.*)?$/, async (route) => {
      if (route.request().method() !== 'GET') return route.continue();
      asked.add(route.request().url());
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 250));
      inFlight--;
      await route.continue();
    });
    await a.page.goto('/access-requests');
    const cards = a.page.getByTestId('access-request');
    await cards.filter({ hasText: 'Checkout outage' }).waitFor();
    await cards.filter({ hasText: 'Quarterly report' }).waitFor();
    expect(await cards.count()).toBe(2);
    // Ada administers the nine projects (and sees no other): each asked, six at most together, and the
    // badge's load is the page's, not a second round.
    expect([...asked].filter((u) => projects.some((p) => u.includes(p.id))).length).toBe(9);
    expect(most).toBe(6);
    await a.page.unroute(/\/v1\/projects\/[^/]+\/access-requests(\?.*)?$/);

    const badge = a.page.getByTestId('inbox-count');
    await expect.poll(() => badge.textContent().catch(() => ''), { timeout: 5000 }).toBe('2');
    await screenshot(a.page, 'access-admin-inbox-1280');
    // Decisions on the page: the badge follows without a reload (the marker would be gone after one).
    await a.page.evaluate(() => {
      (window as unknown as { notReloaded: boolean }).notReloaded = true;
    });
    await cards
      .filter({ hasText: 'Checkout outage' })
      .getByRole('button', { name: /^Approve 1 h/ })
      .click();
    await expect.poll(() => badge.textContent().catch(() => ''), { timeout: 5000 }).toBe('1');
    await cards.filter({ hasText: 'Quarterly report' }).getByRole('button', { name: 'Deny' }).click();
    await a.page.getByRole('dialog').getByRole('button', { name: 'Deny' }).click();
    await expect.poll(() => badge.count(), { timeout: 5000 }).toBe(0);
    expect(await a.page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    await a.page.getByTestId('decided-requests').getByText('denied').waitFor();
    await a.page.setViewportSize({ width: 390, height: 844 });
    await a.page.waitForTimeout(600);
    expect(await a.page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    await screenshot(a.page, 'access-admin-inbox-390');
    expect(a.problems).toEqual([]);
    await a.context.close();
  });

  it('on a phone the Members grid scrolls inside its box, with a hint; the page does not scroll sideways', async () => {
    const p = await project('grid', ['dev', 'staging', 'qa', 'prod']);
    const grant = await server.request('PUT', `/v1/projects/${p.id}/members/${dev.id}/envs/prod`, {
      token: owner.jwt,
      body: { permission: 'read', expiresAt: new Date(Date.now() + 3600_000).toISOString() },
    });
    expect(grant.status).toBe(200);

    const a = await signedIn(admin.jwt, 390);
    await a.page.goto(`/projects/${p.id}?tab=members`);
    const box = a.page.getByTestId('scroll-box');
    await a.page.getByLabel('Dev on prod').waitFor();
    const wrap = box.locator('.table-wrap');
    // The grid is wider than its box, which scrolls; the page stays 390 px wide.
    await expect.poll(() => box.getAttribute('data-overflow')).toBe('true');
    expect(await a.page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    expect(await wrap.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
    const hint = a.page.getByTestId('scroll-hint');
    expect(await hint.isVisible()).toBe(true);
    expect(await hint.textContent()).toContain('Scroll for more environments');
    // The shading is on the right edge until the grid is scrolled to its end, then on the left.
    expect(await box.getAttribute('data-more-right')).toBe('true');
    expect(await box.getAttribute('data-more-left')).toBe('false');
    const shade = () =>
      box.locator('.scroll-hint-frame').evaluate((el) => Number(getComputedStyle(el, '::after').opacity));
    await expect.poll(shade).toBe(1);
    await screenshot(a.page, 'access-admin-members-390');
    await wrap.evaluate((el) => el.scrollTo({ left: el.scrollWidth }));
    await expect.poll(() => box.getAttribute('data-more-right')).toBe('false');
    expect(await box.getAttribute('data-more-left')).toBe('true');
    await expect.poll(shade).toBe(0);
    // Scrolled, prod's time left is in view inside the box, and still the page does not move sideways.
    expect(await a.page.getByLabel('Dev on prod').isVisible()).toBe(true);
    expect(await a.page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    expect(await a.page.evaluate(() => scrollX)).toBe(0);

    // At 1280 px the four environments fit: no hint, no shading.
    await a.page.setViewportSize({ width: 1280, height: 860 });
    await expect.poll(() => box.getAttribute('data-overflow')).toBe('false');
    expect(await a.page.getByTestId('scroll-hint').count()).toBe(0);
    await screenshot(a.page, 'access-admin-members-1280');
    expect(a.problems).toEqual([]);
    await a.context.close();
  });
});
