/**
 * D63 in the dashboard: an Owner sets up single sign-on in Settings against a real OpenID Connect provider on
 * loopback, tests the connection, saves; a new person signs in with SSO from the login page, at the provider's
 * own login page, and lands in that workspace; `?sso_error=` reads as words; a password login refused with
 * SSO_REQUIRED explains and offers SSO; a Member never sees the card. Debian's chromium against the real
 * server, at 1280 and 390 px; screenshots go to test-artifacts/ (and to SHOTS_DIR when set).
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { sessionResponse, ssoConfig, switchWorkspaceResponse } from '@svcenv/contract';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freshPgSchema,
  type ServerProcess,
  signupUser,
  startServer,
  TEST_DATABASE_URL,
} from '../../server/test/harness.js';
import { type StartedProvider, startProvider } from '../../server/test/oidc-provider.js';
import { artifacts, chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

const DOMAIN = 'sso-web.example';
const CLIENT = { clientId: 'svcenv-dashboard', clientSecret: 'provider-secret-0123456789' };

describe.skipIf(!chromiumAvailable())('single sign-on in the dashboard (D63)', () => {
  let server: ServerProcess;
  let browser: Browser;
  let provider: StartedProvider;
  let pg: Awaited<ReturnType<typeof freshPgSchema>> | null = null;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let memberJwt: string;
  let workspaceId: string;

  beforeAll(async () => {
    // A child process on a known port: PUBLIC_URL (the callback's address) is then the server's own. The
    // provider is http on loopback, which D5 allows with WEBHOOK_ALLOW_PRIVATE.
    // With TEST_DATABASE_URL, on a fresh PostgreSQL schema; SQLite otherwise.
    pg = TEST_DATABASE_URL ? await freshPgSchema() : null;
    const env = {
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      ...(pg ? { DATABASE_URL: pg.url, MASTER_KEY: randomBytes(32).toString('base64') } : {}),
    };
    [server, browser] = await Promise.all([startServer({ env }), launch()]);
    provider = await startProvider({
      clients: [{ ...CLIENT, redirectUris: [`${server.url}/v1/auth/sso/callback`] }],
      accounts: {
        ann: { email: `ann@${DOMAIN}`, emailVerified: true, name: 'Ann Lee' },
        una: { email: `una@${DOMAIN}`, emailVerified: false, name: 'Una Verified' },
      },
    });
    // The first account of the instance administers it (D69), so it may claim any domain (ADR 0025).
    owner = await signupUser(server, 'Owner');
    const session = await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    workspaceId = session.body.user.workspaceId;
    const m = await signupUser(server, 'Mia');
    const inv = await server.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: m.email, wsRole: 'Member' },
    });
    expect(inv.status).toBe(200);
    const sw = await server.request('POST', '/v1/auth/switch-workspace', {
      token: m.jwt,
      body: { workspaceId },
      schema: switchWorkspaceResponse,
    });
    memberJwt = sw.body.token;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await provider?.close();
    await pg?.drop();
  });

  /** A screenshot in test-artifacts/, copied to SHOTS_DIR (the review's folder) when that is set. */
  async function shot(page: Page, name: string) {
    await screenshot(page, name);
    const dir = process.env.SHOTS_DIR;
    if (dir) {
      mkdirSync(dir, { recursive: true });
      const from = join(artifacts, `${name}.png`);
      if (existsSync(from)) copyFileSync(from, join(dir, `${name}.png`));
    }
  }
  /** One element's picture (a card), same folders as `shot`. */
  async function shotOf(el: Locator, name: string) {
    mkdirSync(artifacts, { recursive: true });
    // From the top of the page, so the sticky top bar sits at the top and not over the card.
    await el.page().evaluate(() => scrollTo(0, 0));
    const box = (await el.boundingBox())!;
    await el.page().screenshot({ path: join(artifacts, `${name}.png`), fullPage: true, clip: box });
    const dir = process.env.SHOTS_DIR;
    if (dir) copyFileSync(join(artifacts, `${name}.png`), join(dir, `${name}.png`));
  }
  const config = async () => {
    const res = await server.request('GET', '/v1/workspace/sso', { token: owner.jwt });
    return res.status === 200 ? ssoConfig.parse(res.body) : null;
  };
  /** The session of a tab, as the dashboard reads it. */
  const sessionOf = async (page: Page) =>
    page.evaluate(async () => {
      const res = await fetch('/v1/auth/session', { headers: { 'x-svcenv-csrf': '1' } });
      return (await res.json()) as { user: { email: string; workspaceId: string; wsRole: string; name: string } };
    });
  /**
   * Requests of the tab that failed on loopback (svcenv's or the provider's); `withoutOffsite` drops from the
   * tab's problems what the provider's development login page fails to fetch from the internet (offline here).
   */
  function watchOffsite(page: Page): () => string[] {
    const failed: string[] = [];
    page.on('requestfailed', (r) => failed.push(`${r.url()} ${r.failure()?.errorText}`));
    // ERR_ABORTED is no failure: the start's redirect not followed inside fetch (redirect: 'manual'), or a
    // request a navigation cut short.
    return () =>
      failed.filter((f) => /^https?:\/\/(127\.0\.0\.1|localhost)[:/]/.test(f) && !f.endsWith('net::ERR_ABORTED'));
  }
  const withoutOffsite = (problems: string[]) => problems.filter((p) => !p.includes('net::ERR_NAME_NOT_RESOLVED'));

  /** At the provider's own login page (oidc-provider's development form): any password, `login` the account. */
  async function signInAtProvider(page: Page, login: string) {
    await page.waitForURL((u) => u.toString().startsWith(provider.issuer));
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('whatever');
    await page.locator('button[type=submit]').click();
  }

  const noHorizontalScroll = async (page: Page, width: number) =>
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);

  it('offers SSO on the login page; an unclaimed domain reads as a sentence', async () => {
    for (const width of [1280, 390]) {
      const { page, problems } = await openTab(browser, server.url, width);
      try {
        await page.goto('/login');
        await page.getByRole('button', { name: 'Sign in with SSO' }).click();
        const form = page.getByTestId('sso-form');
        await form.getByLabel('Work email').fill('ann@nobody-claims.example');
        await shot(page, `sso-login-${width}`);
        await form.getByRole('button', { name: 'Continue with SSO' }).click();
        await expect
          .poll(() => form.locator('.field-error').textContent())
          .toBe(
            'No single sign-on is set up for nobody-claims.example. Log in with your password, or check the address.',
          );
        expect(page.url()).toBe(`${server.url}/login`);
        await noHorizontalScroll(page, width);
        await shot(page, `sso-login-unclaimed-${width}`);
        // Back to the password, with the address kept.
        await form.getByRole('button', { name: 'Log in with a password instead' }).click();
        expect(await page.locator('[name=email]').inputValue()).toBe('ann@nobody-claims.example');
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    }
  });

  it('says why a single sign-on failed, in words, never the link’s text', async () => {
    for (const width of [1280, 390]) {
      const { page, problems } = await openTab(browser, server.url, width);
      try {
        await page.goto('/login?sso_error=email_not_verified');
        const notice = page.getByTestId('sso-error');
        await expect.poll(() => notice.textContent()).toContain('does not vouch for your email address');
        await noHorizontalScroll(page, width);
        await shot(page, `sso-login-error-${width}`);
        await page.goto('/login?sso_error=%3Cb%3Eyour%20account%20is%20locked%3C%2Fb%3E');
        await expect
          .poll(() => notice.textContent())
          .toBe('Single sign-on failed: Single sign-on did not complete. Try again, or ask a workspace Owner.');
        expect(await page.content()).not.toContain('account is locked');
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    }
  });

  it('never shows the card to a Member', async () => {
    for (const width of [1280, 390]) {
      const tab = await openTab(browser, server.url, width);
      await signIn(tab, server.url, memberJwt);
      try {
        await tab.page.goto('/settings');
        await tab.page.getByRole('region', { name: 'Password' }).waitFor();
        expect(await tab.page.getByRole('region', { name: 'Single sign-on' }).count()).toBe(0);
        await shot(tab.page, `sso-settings-member-${width}`);
        expect(tab.problems).toEqual([]);
      } finally {
        await tab.page.close();
      }
    }
  });

  it('lets the Owner set it up: the redirect URI, a connection test in words, then save', async () => {
    for (const width of [390, 1280]) {
      const tab = await openTab(browser, server.url, width);
      await signIn(tab, server.url, owner.jwt);
      const { page, problems } = tab;
      try {
        await page.goto('/settings');
        const card = page.getByRole('region', { name: 'Single sign-on' });
        await card.getByText('Not set up').waitFor();
        expect(await card.getByTestId('sso-redirect-uri').textContent()).toBe(`${server.url}/v1/auth/sso/callback`);
        await noHorizontalScroll(page, width);
        await shotOf(card, `sso-settings-empty-${width}`);
        if (width === 390) continue;

        await card.locator('[name=issuer]').fill(`${provider.issuer}/nowhere`);
        await card.locator('[name=clientId]').fill(CLIENT.clientId);
        await card.locator('[name=clientSecret]').fill(CLIENT.clientSecret);
        await card.locator('[name=domains]').fill(`@${DOMAIN.toUpperCase()}`);
        // A wrong issuer: the test says so in words, and nothing is saved.
        await card.getByRole('button', { name: 'Test the connection' }).click();
        const result = card.getByTestId('sso-test-result');
        await expect.poll(() => result.textContent()).toContain('The issuer did not answer');
        expect(await config()).toBeNull();
        await card.locator('[name=issuer]').fill(provider.issuer);
        // Any change makes the earlier answer stale.
        expect(await result.count()).toBe(0);
        await card.getByRole('button', { name: 'Test the connection' }).click();
        await expect.poll(() => result.textContent()).toContain('The provider answered.');
        expect(await result.textContent()).toContain(`${provider.issuer}/auth`);
        expect(await config()).toBeNull();
        await shotOf(card, 'sso-settings-test-1280');

        await card.getByRole('button', { name: 'Set up single sign-on' }).click();
        await card.getByText(`On for ${DOMAIN}`).waitFor();
        expect(await config()).toMatchObject({
          issuer: provider.issuer,
          clientId: CLIENT.clientId,
          domains: [DOMAIN],
          enforce: false,
          redirectUri: `${server.url}/v1/auth/sso/callback`,
        });
        expect(JSON.stringify(await config())).not.toContain(CLIENT.clientSecret);
        // The secret is write-only: "Stored", with a way to replace it.
        await card.getByText('Stored', { exact: true }).waitFor();
        expect(await card.locator('[name=clientSecret]').count()).toBe(0);
        expect(await card.getByTestId('sso-login-url').textContent()).toMatch(
          new RegExp(`^${server.url}/v1/auth/sso/start\\?workspace=`),
        );
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    }
    // The configured card at both widths.
    for (const width of [1280, 390]) {
      const tab = await openTab(browser, server.url, width);
      await signIn(tab, server.url, owner.jwt);
      try {
        await tab.page.goto('/settings');
        const card = tab.page.getByRole('region', { name: 'Single sign-on' });
        await card.getByText(`On for ${DOMAIN}`).waitFor();
        await noHorizontalScroll(tab.page, width);
        await shotOf(card, `sso-settings-configured-${width}`);
        expect(tab.problems).toEqual([]);
      } finally {
        await tab.page.close();
      }
    }
  });

  it('signs a new person in with SSO: work email, the provider’s login page, the workspace as a Member', async () => {
    const { page, context, problems } = await openTab(browser, server.url, 1280);
    const loopbackFailures = watchOffsite(page);
    try {
      await page.goto('/login?next=%2Fteam');
      await page.getByRole('button', { name: 'Sign in with SSO' }).click();
      await page.getByLabel('Work email').fill(`ann@${DOMAIN}`);
      await page.getByRole('button', { name: 'Continue with SSO' }).click();
      await signInAtProvider(page, 'ann');
      // Back signed in, on the page asked for before the login.
      await page.waitForURL(`${server.url}/team`);
      await page.getByRole('link', { name: 'Projects' }).waitFor();
      const { user } = await sessionOf(page);
      expect(user).toMatchObject({ email: `ann@${DOMAIN}`, workspaceId, wsRole: 'Member', name: 'Ann Lee' });
      // The session is the dashboard's cookie, as after a password login (ADR 0014).
      const cookies = await context.cookies(server.url);
      expect(cookies.find((c) => c.name === 'svcenv_session')?.httpOnly).toBe(true);
      // A Member: no Single sign-on card for them either.
      await page.goto('/settings');
      await page.getByRole('region', { name: 'Password' }).waitFor();
      expect(await page.getByRole('region', { name: 'Single sign-on' }).count()).toBe(0);
      expect(withoutOffsite(problems)).toEqual([]);
      expect(loopbackFailures()).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('comes back with words when the provider does not vouch for the email', async () => {
    const { page, context, problems } = await openTab(browser, server.url, 390);
    const loopbackFailures = watchOffsite(page);
    try {
      await page.goto('/login');
      await page.getByRole('button', { name: 'Sign in with SSO' }).click();
      await page.getByLabel('Work email').fill(`una@${DOMAIN}`);
      await page.getByRole('button', { name: 'Continue with SSO' }).click();
      await signInAtProvider(page, 'una');
      await page.waitForURL(`${server.url}/login?sso_error=email_not_verified`);
      await expect.poll(() => page.getByTestId('sso-error').textContent()).toContain('does not vouch for your email');
      expect(withoutOffsite(problems)).toEqual([]);
      expect(loopbackFailures()).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('with "Require single sign-on", a password login explains and offers SSO with the same address', async () => {
    const owners = await openTab(browser, server.url, 1280);
    await signIn(owners, server.url, owner.jwt);
    try {
      await owners.page.goto('/settings');
      const card = owners.page.getByRole('region', { name: 'Single sign-on' });
      await card.getByRole('switch', { name: /Require single sign-on/ }).check();
      // "Replace" opens the secret field; left empty, the save keeps the stored secret.
      await card.getByRole('button', { name: 'Replace' }).click();
      await card.getByText('Leave empty to keep the stored secret.').waitFor();
      await card.getByRole('button', { name: 'Save' }).click();
      await card.getByText('Password login refused').waitFor();
      // Saved without a secret: the stored one is kept (the sign-in below still works).
      expect(await config()).toMatchObject({ enforce: true });
    } finally {
      await owners.context.close();
    }

    for (const width of [390, 1280]) {
      const { page, context, problems } = await openTab(browser, server.url, width);
      const loopbackFailures = watchOffsite(page);
      try {
        await page.goto('/login');
        await page.locator('[name=email]').fill(`ann@${DOMAIN}`);
        await page.locator('[name=password]').fill('a-password-guess');
        await page.getByRole('button', { name: 'Log in' }).click();
        const required = page.getByTestId('sso-required');
        await expect.poll(() => required.textContent()).toContain(`ann@${DOMAIN} signs in through`);
        // One offer of SSO, not two.
        expect(await page.getByRole('button', { name: 'Sign in with SSO' }).count()).toBe(0);
        // The server's own sentence is not shown under the field as well.
        expect(await page.locator('.field-error').count()).toBe(0);
        await noHorizontalScroll(page, width);
        await shot(page, `sso-login-required-${width}`);
        if (width === 390) continue;
        await required.getByRole('button', { name: 'Continue with SSO' }).click();
        await signInAtProvider(page, 'ann');
        await page.waitForURL(`${server.url}/projects`);
        expect((await sessionOf(page)).user.email).toBe(`ann@${DOMAIN}`);
        expect(withoutOffsite(problems)).toEqual([]);
        expect(loopbackFailures()).toEqual([]);
      } finally {
        await context.close();
      }
    }
  });

  it('removes single sign-on after a confirmation', async () => {
    const tab = await openTab(browser, server.url, 1280);
    await signIn(tab, server.url, owner.jwt);
    try {
      await tab.page.goto('/settings');
      const card = tab.page.getByRole('region', { name: 'Single sign-on' });
      await card.getByRole('button', { name: 'Remove' }).click();
      const dlg = tab.page.getByRole('dialog', { name: 'Remove single sign-on?' });
      await dlg.getByRole('button', { name: 'Remove' }).click();
      await card.getByText('Not set up').waitFor();
      expect(await config()).toBeNull();
      expect(tab.problems).toEqual([]);
    } finally {
      await tab.context.close();
    }
  });
});
