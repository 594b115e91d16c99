/**
 * An invited teammate's first screen, in chromium against the real server: a Member with no project is told
 * which workspace they joined and who can give them access (the workspace's Owners by name, from the members
 * list every member may read), with the place kept for D74's "ask for access"; once in a project, an
 * environment they cannot open (D57 `none`) is no chip on its card. An Owner without projects still gets
 * "create your first project".
 */
import { type Project, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

describe.skipIf(!chromiumAvailable())("an invited teammate's first screen", () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let workspaceId: string;
  let workspaceName: string;
  let omarEmail: string;

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ env: { LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' } }),
      launch(),
    ]);
    owner = await signupUser(server, 'Olivia');
    const session = await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    workspaceId = session.body.user.workspaceId;
    workspaceName = session.body.user.workspaceName;
    // A second Owner, so the screen names both.
    omarEmail = (await join('Omar', 'Owner')).email;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** Someone with an account, added to Olivia's workspace (at once, D17) and signed in to it. */
  async function join(name: string, wsRole: 'Owner' | 'Member') {
    const u = await signupUser(server, name);
    const inv = await server.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: u.email, wsRole },
    });
    expect(inv.status).toBe(200);
    const sw = await server.request('POST', '/v1/auth/switch-workspace', {
      token: u.jwt,
      body: { workspaceId },
      schema: switchWorkspaceResponse,
    });
    return { id: u.user.id, email: u.email, jwt: sw.body.token };
  }

  for (const width of [1280, 390]) {
    it(`a Member without projects learns the workspace and its Owners; no "create your first project" (${width} px)`, async () => {
      const max = await join(`Max${width}`, 'Member');
      const tab = await openTab(browser, server.url, width);
      await signIn(tab, server.url, max.jwt);
      const { page, problems } = tab;
      await page.goto('/projects');
      const welcome = page.getByTestId('member-welcome');
      await welcome.waitFor();
      expect(await welcome.getByRole('heading').textContent()).toBe(`You were added to ${workspaceName}`);
      const owners = page.getByRole('list', { name: 'Workspace Owners' });
      await expect.poll(() => owners.textContent()).toContain('Olivia');
      expect(await owners.textContent()).toContain('Omar');
      expect(await owners.getByRole('listitem').count()).toBe(2);
      expect(await owners.textContent()).not.toContain('Max');
      expect(await page.getByText('No projects yet').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Create your first project' }).count()).toBe(0);
      // Offered to ask: a message to both Owners, ready in the mail program, naming the workspace.
      const ask = page.getByTestId('ask-owners');
      expect(await ask.textContent()).toBe('Ask the Owners for access');
      const href = new URL((await ask.getAttribute('href'))!);
      expect(href.protocol).toBe('mailto:');
      expect(decodeURIComponent(href.pathname).split(',').sort()).toEqual([owner.email, omarEmail].sort());
      expect(href.searchParams.get('subject')).toBe(`Access to a project in ${workspaceName} (svcenv)`);
      // Creating a project of their own stays possible (D20).
      expect(await welcome.getByRole('button', { name: 'Create a project' }).isVisible()).toBe(true);
      if (width < 600) expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      await screenshot(page, `first-screen-member-${width}`);

      // Added as Developer to a project with a protected prod: prod (none) is no chip; dev and staging are.
      const p: Project = await createProject(server, owner.jwt, {
        name: `web-${width}-storefront-and-checkout`,
        envs: ['dev', 'staging', 'prod'],
      });
      const added = await server.request('PUT', `/v1/projects/${p.id}/members/${max.id}`, {
        token: owner.jwt,
        body: { role: 'Developer' },
      });
      expect(added.status).toBe(200);
      const closed = await server.request('PUT', `/v1/projects/${p.id}/members/${max.id}/envs/staging`, {
        token: owner.jwt,
        body: { permission: 'none' },
      });
      expect(closed.status).toBe(200);
      await page.reload();
      const card = page.locator('.project-card', { hasText: p.name });
      await card.waitFor();
      expect(await card.locator('.chip').allTextContents()).toEqual(['dev']);
      expect(await page.getByTestId('member-welcome').count()).toBe(0);
      await screenshot(page, `first-screen-member-project-${width}`);
      expect(problems).toEqual([]);
      await tab.context.close();
    });
  }

  it('an Owner without projects is still asked to create the first one', async () => {
    const o = await signupUser(server, 'Fresh');
    const tab = await openTab(browser, server.url, 1280);
    await signIn(tab, server.url, o.jwt);
    await tab.page.goto('/projects');
    await tab.page.getByRole('button', { name: 'Create your first project' }).waitFor();
    expect(await tab.page.getByTestId('member-welcome').count()).toBe(0);
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });
});
