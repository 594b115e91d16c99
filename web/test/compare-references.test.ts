/**
 * Compare and Overview judge what a pull gives (ADR 0026), in chromium against the real server: `${dev.DB_HOST}`
 * in staging beside `db2.internal` in dev is "same value, by reference", apart from identical, with the
 * resolved value shown; a secret reached by reference too (the server's verdict). Compare offers "Reveal
 * secrets to compare" to whoever may write (D23, D57; audited), and to a Read-only member explains why not.
 */
import { auditPage, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer, upsert } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

describe.skipIf(!chromiumAvailable())('comparing environments by what a pull gives', () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let reader: { id: string; jwt: string };
  let projectId: string;

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ env: { LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' } }),
      launch(),
    ]);
    owner = await signupUser(server, 'Olivia');
    const session = await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    const p = await createProject(server, owner.jwt, { name: 'shop', envs: ['dev', 'staging'] });
    projectId = p.id;
    const put = (env: string, key: string, value: string, type: 'plain' | 'secret' = 'plain') =>
      upsert(server, owner.jwt, projectId, [env], [{ key, value, type }]);
    await put('dev', 'DB_HOST', 'db2.internal');
    await put('staging', 'DB_HOST', '${dev.DB_HOST}');
    await put('dev', 'DB_PASS', 'pw-shared-1', 'secret');
    await put('staging', 'DB_PASS', '${dev.DB_PASS}', 'secret');
    await put('dev', 'REGION', 'eu');
    await put('staging', 'REGION', 'us');
    await put('dev', 'LOG_LEVEL', 'info');
    await put('staging', 'LOG_LEVEL', 'info');

    const u = await signupUser(server, 'Rita');
    await server.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: u.email, wsRole: 'Member' },
    });
    const sw = await server.request('POST', '/v1/auth/switch-workspace', {
      token: u.jwt,
      body: { workspaceId: session.body.user.workspaceId },
      schema: switchWorkspaceResponse,
    });
    reader = { id: u.user.id, jwt: sw.body.token };
    const added = await server.request('PUT', `/v1/projects/${projectId}/members/${reader.id}`, {
      token: owner.jwt,
      body: { role: 'Read-only' },
    });
    expect(added.status).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function reveals() {
    const res = await server.request('GET', `/v1/projects/${projectId}/audit?action=var.reveal&limit=200`, {
      token: owner.jwt,
      schema: auditPage,
    });
    return res.body.logs.length;
  }
  const row = (page: Page, key: string) => page.getByTestId(`compare-row-${key}`);
  const overviewState = async (page: Page, key: string, env: string) =>
    (await page.getByTestId(`overview-${key}-${env}`).getAttribute('class'))?.match(
      /overview-(missing|set|same|byRef|differs|unknown)/,
    )?.[1];

  for (const width of [1280, 390]) {
    it(`Compare and Overview: same value by reference, identical, differs; reveal for writers (${width} px)`, async () => {
      const tab = await openTab(browser, server.url, width);
      await signIn(tab, server.url, owner.jwt);
      const { page, problems } = tab;
      await page.goto(`/projects/${projectId}?tab=compare`);
      await row(page, 'DB_HOST').waitFor();
      expect(await row(page, 'DB_HOST').textContent()).toContain('same value, by reference');
      expect(await row(page, 'DB_HOST').getByTestId('compare-resolved').textContent()).toContain('db2.internal');
      // The secret: masked in the listing, but the server compared what both pull.
      expect(await row(page, 'DB_PASS').textContent()).toContain('same value, by reference');
      expect(await row(page, 'REGION').textContent()).toContain('differs');
      // Identical keys are hidden by default; by reference ones are not identical and stay.
      expect(await row(page, 'LOG_LEVEL').count()).toBe(0);
      const summary = await page.getByTestId('diff-summary').textContent();
      expect(summary).toContain('1 differ');
      expect(summary).toContain('1 identical');
      expect(summary).toContain('2 same value, by reference');
      expect(await page.locator('.diff-table').textContent()).not.toContain('pw-shared-1');

      // Reveal (write on both; audited once per environment listed).
      const before = await reveals();
      await page.getByRole('button', { name: 'Reveal secrets to compare' }).click();
      await expect.poll(() => row(page, 'DB_PASS').textContent()).toContain('pw-shared-1');
      expect(await row(page, 'DB_PASS').textContent()).toContain('${dev.DB_PASS}');
      expect(await reveals()).toBe(before + 2);
      expect(await page.getByRole('button', { name: 'Reveal secrets to compare' }).count()).toBe(0);
      if (width < 600) expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      await screenshot(page, `compare-by-reference-owner-${width}`);

      // Overview: the referencing cell says so; the row is not "differs".
      await page.getByRole('tab', { name: 'Overview' }).click();
      await page.getByTestId('overview-row-DB_HOST').waitFor();
      expect(await overviewState(page, 'DB_HOST', 'dev')).toBe('same');
      expect(await overviewState(page, 'DB_HOST', 'staging')).toBe('byRef');
      expect(await page.getByTestId('overview-row-DB_HOST').locator('th').textContent()).toContain(
        'same value, by reference',
      );
      expect(await page.getByTestId('overview-DB_HOST-staging').textContent()).toContain('db2.internal');
      expect(await overviewState(page, 'REGION', 'dev')).toBe('differs');
      expect(await overviewState(page, 'LOG_LEVEL', 'staging')).toBe('same');
      await page.getByRole('button', { name: 'Reveal secrets to compare' }).click();
      await expect.poll(() => overviewState(page, 'DB_PASS', 'staging')).toBe('byRef');
      await screenshot(page, `overview-by-reference-owner-${width}`);
      expect(problems).toEqual([]);
      await tab.context.close();
    });

    it(`a Read-only member sees the verdict, masked, and why there is no reveal (${width} px)`, async () => {
      const tab = await openTab(browser, server.url, width);
      await signIn(tab, server.url, reader.jwt);
      const { page, problems } = tab;
      await page.goto(`/projects/${projectId}?tab=compare`);
      await row(page, 'DB_PASS').waitFor();
      expect(await row(page, 'DB_PASS').textContent()).toContain('same value, by reference');
      expect(await row(page, 'DB_HOST').textContent()).toContain('same value, by reference');
      expect(await page.getByRole('button', { name: 'Reveal secrets to compare' }).count()).toBe(0);
      expect(await page.getByTestId('compare-masked-note').textContent()).toContain('needs write permission');
      expect(await page.locator('.diff-table').textContent()).not.toContain('pw-shared-1');
      if (width < 600) expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      await screenshot(page, `compare-by-reference-reader-${width}`);
      await page.getByRole('tab', { name: 'Overview' }).click();
      await page.getByTestId('overview-row-DB_HOST').waitFor();
      expect(await overviewState(page, 'DB_HOST', 'staging')).toBe('byRef');
      expect(await overviewState(page, 'DB_PASS', 'staging')).toBe('set');
      await screenshot(page, `overview-by-reference-reader-${width}`);
      expect(problems).toEqual([]);
      await tab.context.close();
    });
  }
});
