/**
 * The dashboard on a server without SMTP_URL (ADR 0021): the verification banner and the forgot-password page
 * say that no email comes and offer what works; and the workspace audit log names each entry's project
 * (ADR 0015). Debian's chromium against the real server; every screen is saved at 1280 and 390 px in
 * test-artifacts/ as no-email-<screen>-<width>.png.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer, upsert } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

describe.skipIf(!chromiumAvailable())('the dashboard without email (ADR 0021) and the audit log by project', () => {
  let server: ServerProcess;
  let browser: Browser;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer({ env: { LOG_LEVEL: 'warn' } }), launch()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function shots(page: Page, name: string) {
    const own = page.viewportSize()!;
    await page.setViewportSize({ width: 1280, height: 860 });
    await screenshot(page, `no-email-${name}-1280`);
    await page.setViewportSize({ width: 390, height: 844 });
    // The sidebar slides off screen at a phone's width (0.18 s): the shot is of where it ends.
    await page.waitForTimeout(300);
    await screenshot(page, `no-email-${name}-390`);
    await page.setViewportSize(own);
  }

  it('says that no verification email comes, and can be put away for good', async () => {
    const u = await signupUser(server, 'Unmailed');
    const tab = await openTab(browser, server.url);
    await signIn(tab, server.url, u.jwt);
    const { page, problems } = tab;
    await page.goto('/projects');
    const banner = page.getByTestId('verify-banner');
    await banner.getByText('This server does not send email').waitFor();
    expect(await banner.textContent()).not.toContain('we sent you a link');
    expect(await banner.getByRole('button', { name: 'Resend the email' }).count()).toBe(0);
    await shots(page, 'banner');

    await page.goto('/settings');
    await page.getByText('this server sends no email; nothing depends on it').waitFor();
    await page.getByRole('button', { name: 'Got it' }).click();
    await banner.waitFor({ state: 'hidden' });
    await page.reload();
    await page.getByRole('heading', { name: 'Settings' }).first().waitFor();
    await page.getByText('this server sends no email; nothing depends on it').waitFor();
    expect(await banner.count()).toBe(0);
    expect(problems).toEqual([]);
    await tab.context.close();
  });

  it('sends a forgotten password to the instance administrator instead of promising an email', async () => {
    const { page, problems, context } = await openTab(browser, server.url);
    await page.goto('/login');
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByTestId('no-email-reset').getByText('This server does not send email').waitFor();
    await page.getByText('Ask your instance administrator for a reset link').waitFor();
    expect(await page.getByRole('button', { name: 'Send reset link' }).count()).toBe(0);
    expect(await page.locator('body').textContent()).not.toMatch(/spam/i);
    await shots(page, 'forgot');
    await page.getByRole('link', { name: 'Log in' }).click();
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('names the project of each entry in the workspace audit log', async () => {
    const u = await signupUser(server, 'Auditor');
    const shop = await createProject(server, u.jwt, { name: 'Web shop', envs: ['dev', 'prod'] });
    const billing = await createProject(server, u.jwt, { name: 'Billing API', envs: ['dev'] });
    await upsert(server, u.jwt, shop.id, ['dev'], [{ key: 'DATABASE_URL', value: 'x', type: 'plain' }]);
    await upsert(server, u.jwt, billing.id, ['dev'], [{ key: 'STRIPE_KEY', value: 'y', type: 'secret' }]);
    const tab = await openTab(browser, server.url);
    await signIn(tab, server.url, u.jwt);
    const { page, problems } = tab;
    await page.goto('/audit');
    await page.getByRole('columnheader', { name: 'Project' }).waitFor();
    const rows = page.getByTestId('audit-row');
    const saved = rows.filter({ hasText: 'Saved variables' });
    await expect.poll(() => saved.count()).toBe(2);
    const projectOf = async (key: string) =>
      (await saved.filter({ hasText: key }).getByTestId('audit-project').innerText()).replace(/\s+/g, ' ').trim();
    expect(await projectOf('STRIPE_KEY')).toBe('Billing API billing-api');
    expect(await projectOf('DATABASE_URL')).toBe('Web shop web-shop');
    // An empty list in an entry's detail is left out rather than shown as a bare "updated:".
    expect(await saved.first().innerText()).not.toMatch(/updated:/);
    await shots(page, 'audit');

    // The project's own log needs no Project column.
    await saved.filter({ hasText: 'STRIPE_KEY' }).getByRole('link', { name: 'Billing API' }).click();
    await page.waitForURL(/\/projects\//);
    expect(new URL(page.url()).pathname).toBe(`/projects/${billing.id}`);
    expect(problems).toEqual([]);
    await tab.context.close();
  });
});
