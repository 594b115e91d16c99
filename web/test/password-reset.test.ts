/**
 * The password reset in a browser (D54): Debian's chromium against the real server (server/src/main.ts as a
 * child process, the SMTP capture for the email). Every screen is saved at 1280 and 390 px in
 * test-artifacts/ as reset-<screen>-<width>.png.
 */
import { backupCodesResponse, mfaSetupResponse } from '@svcenv/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, signupUser, startServer } from '../../server/test/harness.js';
import { startSmtpCapture } from '../../server/test/smtp.js';
import { chromiumAvailable, launch, openTab, screenshot, totp } from './browser.js';

describe.skipIf(!chromiumAvailable())('password reset in a browser (D54)', () => {
  let server: ServerProcess;
  let smtp: Awaited<ReturnType<typeof startSmtpCapture>>;
  let browser: Browser;

  beforeAll(async () => {
    smtp = await startSmtpCapture();
    [server, browser] = await Promise.all([startServer({ env: { SMTP_URL: smtp.url, LOG_LEVEL: 'warn' } }), launch()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await smtp?.stop();
  });

  /** The screen as it is, at 1280 px and at 390 px (then back to the tab's own width). */
  async function shots(page: Page, name: string) {
    const own = page.viewportSize()!;
    await page.setViewportSize({ width: 1280, height: 860 });
    await screenshot(page, `reset-${name}-1280`);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, `reset-${name}-390`);
    await page.setViewportSize(own);
  }

  /** The path and query of the newest reset link mailed to `email` (PUBLIC_URL is the server's own). */
  async function mailedLink(email: string, count: number) {
    const mails = () => smtp.mails.filter((m) => m.to.includes(email) && m.subject === 'Reset your svcenv password');
    await smtp.waitFor(email, () => mails().length >= count);
    const link = /https?:\/\/\S+\/reset-password\?token=[0-9A-Za-z]+/.exec(mails()[count - 1]!.text)![0];
    expect(link.startsWith(`${server.url}/reset-password?token=`)).toBe(true);
    return link.slice(server.url.length);
  }

  it('forgot → emailed link → new password (twice) → login page notice → login with the new password', async () => {
    const u = await signupUser(server, 'Reset');
    const { page, context, problems } = await openTab(browser, server.url);
    await page.goto('/login');
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
    await page.getByLabel('Email').fill(u.email);
    await shots(page, 'forgot');
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByText(`If an account exists for ${u.email}, we sent it a link`).waitFor();
    await shots(page, 'sent');

    await page.goto(await mailedLink(u.email, 1));
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await page.getByLabel(/^New password/).fill('a new password for reset');
    await page.getByLabel('Repeat new password').fill('a different password');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('the two passwords do not match').waitFor();
    await page.getByLabel('Repeat new password').fill('a new password for reset');
    await page.getByText('the two passwords do not match').waitFor({ state: 'hidden' });
    await shots(page, 'form');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('Your password has been changed').waitFor();
    expect(new URL(page.url()).pathname).toBe('/login');
    await shots(page, 'done');

    // The old password is gone, the new one works.
    await page.getByLabel('Email').fill(u.email);
    await page.getByLabel('Password').fill(u.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByText('wrong email or password').waitFor();
    await page.getByLabel('Password').fill('a new password for reset');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();

    // The link was single-use: opened again, it says so and offers a new one.
    await page.context().clearCookies();
    await page.goto(await mailedLink(u.email, 1));
    await page.getByLabel(/^New password/).fill('yet another password');
    await page.getByLabel('Repeat new password').fill('yet another password');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('this password reset link is invalid or has expired').waitFor();
    await shots(page, 'dead-link');
    await page.getByRole('button', { name: 'Request a new link' }).click();
    await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('asks for the two-factor code when the account has it; a wrong code is shown on the field', async () => {
    const u = await signupUser(server, 'Twofa');
    const setup = await server.request('POST', '/v1/me/mfa/setup', { token: u.jwt, schema: mfaSetupResponse });
    const enable = await server.request('POST', '/v1/me/mfa/enable', {
      token: u.jwt,
      body: { code: totp(setup.body.secret) },
      schema: backupCodesResponse,
    });
    expect(enable.status).toBe(200);
    const { page, context, problems } = await openTab(browser, server.url, 390);
    await page.goto('/forgot-password');
    await page.getByLabel('Email').fill(u.email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByText('If an account exists').waitFor();

    await page.goto(await mailedLink(u.email, 1));
    await page.getByLabel(/^New password/).fill('two factor reset pw');
    await page.getByLabel('Repeat new password').fill('two factor reset pw');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('This account uses two-factor authentication').waitFor();
    await page.getByLabel('Authentication code').fill('000000');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('invalid two-factor code').waitFor();
    await shots(page, 'code');
    // A backup code: the TOTP code that enabled two-factor may still be in its step (D13 refuses it again).
    await page.getByLabel('Authentication code').fill(enable.body.backupCodes[0]!);
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('Your password has been changed').waitFor();

    await page.getByLabel('Email').fill(u.email);
    await page.getByLabel('Password').fill('two factor reset pw');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByLabel('Authentication code').waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });
});
