/**
 * D69 in the dashboard: the Instance page of an administrator (signup mode, plans, a reset link shown once),
 * hidden from everyone else; a plan limit names the remedy for whoever reads it; login and signup say when
 * signup is closed. D68: a link to a project of another of the user's workspaces switches there. Debian's
 * chromium against the real server; screenshots go to test-artifacts/.
 */
import { operations as ops } from '@svcenv/contract/operations';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

type User = Awaited<ReturnType<typeof signupUser>>;

describe.skipIf(!chromiumAvailable())('the Instance page and plan limits (D69), project links (D68)', () => {
  let server: ServerProcess;
  let browser: Browser;
  let admin: User;
  let member: User;
  let memberWs: string;
  let memberProject: string;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer({ env: { LOG_LEVEL: 'warn' } }), launch()]);
    admin = await signupUser(server, 'Admin');
    member = await signupUser(server, 'Member');
    memberWs = (await server.call(ops.getSession, {}, member.jwt)).body.user.workspaceId;
    memberProject = (await createProject(server, member.jwt, { name: 'member-app' })).id;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const signedIn = async (jwt: string, width: number) => {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, jwt);
    return tab;
  };

  for (const width of [1280, 390]) {
    it(`an administrator sets plans and the signup mode, and makes a reset link shown once (${width} px)`, async () => {
      const { page, context, problems } = await signedIn(admin.jwt, width);
      await page.goto('/instance');
      const workspaces = page.getByTestId('instance-workspaces');
      await workspaces.getByText("Member's workspace").waitFor();
      // The users are a request of their own: wait for their table too before counting in it.
      const users = page.getByTestId('instance-users');
      await users.getByText(member.email).waitFor();
      expect(await users.getByText(member.email).count()).toBe(1);

      const select = page.getByLabel("Plan of Member's workspace");
      await select.selectOption('team');
      await page.getByText("Member's workspace is now on the team plan").waitFor();
      const billing = await server.call(ops.getBilling, {}, member.jwt);
      expect(billing.body.plan).toBe('team');
      await select.selectOption('free');
      await expect.poll(async () => (await server.call(ops.getBilling, {}, member.jwt)).body.plan).toBe('free');

      await page.getByRole('radio', { name: /Invite only/ }).check();
      await expect.poll(async () => (await server.call(ops.authOptions)).body.signup).toBe('invite');
      await page.getByRole('radio', { name: /Open/ }).check();
      await expect.poll(async () => (await server.call(ops.authOptions)).body.signup).toBe('open');

      await page.getByRole('button', { name: `Reset link for ${member.email}` }).click();
      const dialog = page.getByRole('dialog', { name: `Password reset link for ${member.user.name}` });
      const link = await dialog.getByTestId('once-secret').textContent();
      expect(link).toMatch(/\/reset-password\?token=/);
      expect(await dialog.getByRole('button', { name: 'Copy' }).count()).toBe(1);
      await screenshot(page, `instance-reset-link-${width}`);
      await dialog.getByRole('button', { name: 'I have saved it' }).click();
      await screenshot(page, `instance-admin-${width}`);
      if (width < 600) await page.getByRole('button', { name: 'Menu' }).click();
      // The phone's menu slides in: wait for the entry rather than count it mid-transition.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Instance' }).waitFor();
      expect(problems).toEqual([]);
      await context.close();
    });
  }

  for (const width of [1280, 390]) {
    it(`someone else sees no Instance page, and a plan limit sends them to their administrator (${width} px)`, async () => {
      const { page, context, problems } = await signedIn(member.jwt, width);
      await page.goto('/settings');
      const lift = page.getByTestId('lift-limits');
      await expect.poll(() => lift.textContent()).toContain('Ask your instance administrator');
      expect(await lift.textContent()).not.toContain('npm run admin');
      expect(await page.getByRole('link', { name: 'Instance' }).count()).toBe(0);
      await lift.scrollIntoViewIfNeeded();
      await screenshot(page, `plan-card-member-${width}`);

      await page.goto(`/projects/${memberProject}`);
      await page.getByRole('button', { name: '+ Add environment' }).click();
      const dlg = page.getByRole('dialog', { name: 'Add environment' });
      await dlg.getByLabel('Name').fill('qa');
      await dlg.getByRole('button', { name: 'Add environment' }).click();
      const alert = dlg.getByRole('alert');
      await expect.poll(() => alert.textContent()).toContain('Ask your instance administrator');
      expect(await alert.textContent()).not.toContain('npm run admin');
      expect(problems).toEqual([]);
      await screenshot(page, `plan-limit-member-${width}`);

      await page.goto('/instance');
      await page.getByText('Only administrators of this svcenv instance').waitFor();
      await context.close();
    });
  }

  it('a link to a project of another of my workspaces switches to that workspace (D68)', async () => {
    const shared = await createProject(server, admin.jwt, { name: 'shared-app' });
    const add = await server.call(ops.invite, { body: { email: member.email, wsRole: 'Member' } }, admin.jwt);
    expect(add.status).toBe(200);
    await server.call(
      ops.setProjectRole,
      { params: { id: shared.id, userId: member.user.id }, body: { role: 'Developer' } },
      admin.jwt,
    );
    // The member's session is in their own workspace: the link is the admin workspace's.
    const { page, context, problems } = await signedIn(member.jwt, 1280);
    await page.goto(`/projects/${shared.slug}`);
    await page.getByRole('heading', { name: 'shared-app' }).waitFor();
    await expect.poll(() => page.locator('.ws-name').textContent()).toBe("Admin's workspace");
    await page.getByText("Switched to Admin's workspace, where this project is").waitFor();
    // A project nobody shared with them stays "not found", in the workspace they are in.
    const hidden = await createProject(server, admin.jwt, { name: 'hidden-app' });
    await page.goto(`/projects/${hidden.id}`);
    await page.getByRole('alert').waitFor();
    expect(await page.locator('.ws-name').textContent()).toBe("Admin's workspace");
    expect(problems).toEqual([]);
    await screenshot(page, 'project-link-switch');
    await context.close();
    // The choice is remembered: the next login lands there (D68).
    const login = await server.call(ops.login, { body: { email: member.email, password: member.password } });
    expect((login.body as { user: { workspaceId: string } }).user.workspaceId).not.toBe(memberWs);
  });

  it('login and signup say when signup is closed or by invitation only', async () => {
    await server.call(ops.adminUpdateSettings, { body: { signup: 'closed' } }, admin.jwt);
    try {
      const { page, context, problems } = await openTab(browser, server.url, 390);
      await page.goto('/signup');
      await expect.poll(() => page.getByTestId('signup-notice').textContent()).toContain('Sign-up is closed');
      expect(await page.getByRole('button', { name: 'Create account' }).count()).toBe(0);
      await screenshot(page, 'signup-closed-390');
      await page.goto('/login');
      await expect.poll(() => page.getByTestId('signup-notice').textContent()).toContain('Sign-up is closed');
      await server.call(ops.adminUpdateSettings, { body: { signup: 'invite' } }, admin.jwt);
      await page.goto('/signup');
      await expect.poll(() => page.getByTestId('signup-notice').textContent()).toContain('by invitation only');
      expect(await page.getByRole('button', { name: 'Create account' }).count()).toBe(1);
      expect(problems).toEqual([]);
      await context.close();
    } finally {
      await server.call(ops.adminUpdateSettings, { body: { signup: 'open' } }, admin.jwt);
    }
  });
});
