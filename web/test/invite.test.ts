/**
 * Invites on a server without email (ADR 0012): the Team page no longer says "sent" when
 * the link went only to the log; it says no email was sent and offers "Copy invite link". The invite page
 * names the workspace and the inviter, pre-fills the invited email, warns a signed-in account that is not
 * the invited one, and explains a dead link. Debian's chromium against the real server (no SMTP_URL).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, signupUser, startServer } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

describe.skipIf(!chromiumAvailable())('inviting someone when the server cannot send email', () => {
  let server: ServerProcess;
  let browser: Browser;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer({ env: { LOG_LEVEL: 'warn' } }), launch()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  for (const width of [1280, 390]) {
    it(`the Owner gets the link to hand over, and the invitee is greeted and joins (${width} px)`, async () => {
      const owner = await signupUser(server, 'Olivia');
      const invitee = `newcomer-${width}-${Date.now()}@example.test`;
      const tab = await openTab(browser, server.url, width);
      await signIn(tab, server.url, owner.jwt);
      await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
      const { page } = tab;
      await page.goto('/team');
      await page.getByLabel('Email').fill(invitee);
      await page.getByRole('button', { name: 'Send invite' }).click();
      const note = page.getByTestId('invite-link');
      await expect.poll(() => note.textContent()).toContain('No email was sent');
      expect(await page.getByText(/Invite (sent|emailed)/).count()).toBe(0);
      await note.getByRole('button', { name: 'Copy invite link' }).click();
      const link = await page.evaluate(() => navigator.clipboard.readText());
      expect(link).toMatch(new RegExp(`^${server.url}/invite\\?token=[A-Za-z0-9_-]{40,}$`));
      expect(await note.textContent()).toContain(link);
      await screenshot(page, `invite-link-${width}`);
      expect(tab.problems).toEqual([]);
      await tab.context.close();

      // The invitee opens the link in a fresh browser: who invited them to what, their email pre-filled.
      const guest = await openTab(browser, server.url, width);
      await guest.page.goto(link);
      await expect
        .poll(() => guest.page.getByTestId('invite-greeting').textContent())
        .toBe(`Olivia invited ${invitee} to the workspace Olivia's workspace.`);
      expect(await guest.page.getByLabel('Work email').inputValue()).toBe(invitee);
      await screenshot(guest.page, `invite-page-${width}`);
      await guest.page.getByLabel('Your name').fill('Newcomer');
      await guest.page.getByLabel('Password').fill('correct horse battery');
      await guest.page.getByRole('button', { name: 'Create account' }).click();
      await guest.page.getByRole('button', { name: 'Accept invitation' }).click();
      await guest.page.waitForURL('**/projects');
      await expect.poll(() => guest.page.locator('.ws-button').textContent()).toContain("Olivia's workspace");

      // Used: the same link now explains itself instead of offering a dead form.
      await guest.page.goto(link);
      await guest.page.getByText('This invite link is no longer valid').waitFor();
      expect(guest.problems).toEqual([]);
      await guest.context.close();
    });
  }

  it('a signed-in account that is not the invited one is told so before accepting', async () => {
    const owner = await signupUser(server, 'Oscar');
    const other = await signupUser(server, 'Someone');
    const invitee = `invited-${Date.now()}@example.test`;
    const res = await server.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: invitee, wsRole: 'Member' },
    });
    expect(res.status).toBe(202);
    const link = (res.body as { inviteUrl: string }).inviteUrl;
    const tab = await openTab(browser, server.url, 1280);
    await signIn(tab, server.url, other.jwt);
    await tab.page.goto(link);
    await tab.page.getByText(`You are signed in as ${other.email}, but this invite is for ${invitee}`).waitFor();
    expect(await tab.page.getByRole('button', { name: 'Accept invitation' }).count()).toBe(0);
    await screenshot(tab.page, 'invite-other-account-1280');
    await tab.page.getByRole('button', { name: 'Use a different account' }).click();
    await expect.poll(() => tab.page.getByLabel('Work email').inputValue()).toBe(invitee);
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });
});
