/**
 * The dashboard's session cookie (ADR 0014) in chromium against the real server: the session reaches every tab of the
 * browser, a deep link survives the login, script cannot read the session, and logging out in one tab ends
 * it in the others.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot } from './browser.js';

describe.skipIf(!chromiumAvailable())('a dashboard session in every tab', () => {
  let server: ServerProcess;
  let browser: Browser;
  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer({ env: { LOG_LEVEL: 'warn' } }), launch()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('returns to a deep link after login, and a new tab of the same browser is signed in', async () => {
    const u = await signupUser(server, 'Tabs');
    const p = await createProject(server, u.jwt, { name: 'deep-link-target' });
    const tab = await openTab(browser, server.url);
    const deep = `/projects/${p.id}?tab=compare`;
    await tab.page.goto(deep);
    await tab.page.waitForURL(/\/login\?next=/);
    expect(decodeURIComponent(new URL(tab.page.url()).searchParams.get('next') ?? '')).toBe(deep);
    await tab.page.getByLabel('Email').fill(u.email);
    await tab.page.getByLabel('Password').fill(u.password);
    await tab.page.getByRole('button', { name: 'Log in' }).click();
    await tab.page.getByRole('heading', { name: 'deep-link-target' }).waitFor();
    expect(new URL(tab.page.url()).pathname + new URL(tab.page.url()).search).toBe(deep);
    // No script, this page's included, can read the session.
    expect(await tab.page.evaluate(() => document.cookie)).not.toContain('svcenv_session');
    expect(await tab.page.evaluate(() => localStorage.length + sessionStorage.length)).toBe(0);

    // A second tab (a ctrl-click) of the same browser opens signed in.
    const second = await tab.context.newPage();
    await second.goto('/tokens');
    await second.getByRole('heading', { name: 'Access tokens' }).waitFor();
    await screenshot(second, 'session-second-tab-1280');

    // Logging out in one tab ends the session for the browser: a reload of the other asks to log in.
    await second.getByRole('button', { name: /log out/i }).click();
    await second.waitForURL(/\/login/);
    await tab.page.reload();
    await tab.page.waitForURL(/\/login/);
    expect((await tab.context.cookies()).filter((c) => c.name === 'svcenv_session')).toEqual([]);
    expect(tab.problems).toEqual([]);
  });

  it('asks for no session on a first visit without one (no 401 in the console)', async () => {
    const tab = await openTab(browser, server.url);
    const asked: string[] = [];
    tab.page.on('request', (r) => {
      if (r.url().includes('/v1/auth/session')) asked.push(r.url());
    });
    const errors: string[] = [];
    tab.page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await tab.page.goto('/');
    await tab.page.waitForURL(/\/login/);
    await tab.page.getByRole('button', { name: 'Log in' }).waitFor();
    expect(asked).toEqual([]);
    expect(errors).toEqual([]);
    // A stale sign (the session expired) is asked about once, then forgotten.
    await tab.context.addCookies([{ name: 'svcenv_signed_in', value: '1', url: server.url, sameSite: 'Strict' }]);
    await tab.page.goto('/');
    await tab.page.waitForURL(/\/login/);
    expect(asked).toHaveLength(1);
    expect((await tab.context.cookies()).filter((c) => c.name === 'svcenv_signed_in')).toEqual([]);
  });

  it('never follows a next= that leaves the site', async () => {
    const u = await signupUser(server, 'Next');
    const tab = await openTab(browser, server.url, 390);
    await tab.page.goto('/login?next=%2F%2Fevil.example%2Fsteal');
    await tab.page.getByLabel('Email').fill(u.email);
    await tab.page.getByLabel('Password').fill(u.password);
    await tab.page.getByRole('button', { name: 'Log in' }).click();
    await tab.page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
    expect(new URL(tab.page.url()).host).toBe(new URL(server.url).host);
    await screenshot(tab.page, 'session-login-next-390');
  });
});
