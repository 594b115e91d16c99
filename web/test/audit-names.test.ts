/**
 * The audit log in people's words, in chromium against the real server: the people an entry's detail names by
 * id (project roles, environment permissions, a removed member, a change request's author) read by name
 * (`detailNames`, ADR 0015); a change request's id links to the request, which opens on its project's Change
 * requests tab; the project slug breaks only between words (at a hyphen) at 1280 px and on a phone.
 */
import { changeRequest, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer, upsert } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

describe.skipIf(!chromiumAvailable())('the audit log names people and links change requests', () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let dana: { id: string; jwt: string };
  let rob: { id: string };
  let projectId: string;
  let requestId: string;

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ env: { LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' } }),
      launch(),
    ]);
    owner = await signupUser(server, 'Olivia');
    const session = await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    const workspaceId = session.body.user.workspaceId;
    // A long slug of several words, as the user test's was.
    const p = await createProject(server, owner.jwt, {
      name: 'Payments gateway europe',
      envs: ['dev', 'prod'],
    });
    projectId = p.id;
    // Long words in the slug: at 1280 px the Project column is narrower than it, beside the long details.
    const renamed = await server.request('PATCH', `/v1/projects/${projectId}`, {
      token: owner.jwt,
      body: { slug: 'paymentsgateway-europewest' },
    });
    expect(renamed.status).toBe(200);
    await upsert(server, owner.jwt, projectId, ['prod'], [{ key: 'API_URL', value: 'https://v1', type: 'plain' }]);
    const join = async (name: string) => {
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
    };
    dana = await join('Dana');
    rob = await join('Rob');
    for (const [method, path, body] of [
      ['PUT', `/v1/projects/${projectId}/members/${dana.id}`, { role: 'Developer' }],
      ['PUT', `/v1/projects/${projectId}/members/${dana.id}/envs/prod`, { permission: 'write' }],
      ['PUT', `/v1/projects/${projectId}/members/${rob.id}`, { role: 'Read-only' }],
      ['PUT', `/v1/projects/${projectId}/members/${rob.id}/envs/prod`, { permission: 'none' }],
    ] as const) {
      expect((await server.request(method, path, { token: owner.jwt, body })).status).toBe(200);
    }
    // Rob leaves: his entries still name him.
    expect((await server.request('DELETE', `/v1/workspace/members/${rob.id}`, { token: owner.jwt })).status).toBe(204);
    const cr = await server.request('POST', `/v1/projects/${projectId}/envs/prod/change-requests`, {
      token: dana.jwt,
      body: { message: 'Point at v2', set: [{ key: 'API_URL', value: 'https://v2', type: 'plain' }], delete: [] },
      schema: changeRequest,
    });
    expect(cr.status).toBe(201);
    requestId = cr.body.id;
    const approved = await server.request(
      'POST',
      `/v1/projects/${projectId}/envs/prod/change-requests/${requestId}/approve`,
      { token: owner.jwt },
    );
    expect(approved.status).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** The slug's text split where the browser broke its lines. */
  const slugLines = (page: Page) =>
    page
      .getByTestId('audit-project')
      .first()
      .locator('.audit-slug')
      .evaluate((el) => {
        const text = el.firstChild as Text;
        const lines: string[] = [];
        let top: number | null = null;
        for (let i = 0; i < text.length; i++) {
          const r = document.createRange();
          r.setStart(text, i);
          r.setEnd(text, i + 1);
          const t = Math.round(r.getBoundingClientRect().top);
          if (top === null || t > top + 2) lines.push(text.data[i] ?? '');
          else lines[lines.length - 1] = `${lines.at(-1) ?? ''}${text.data[i] ?? ''}`;
          top = t;
        }
        return lines;
      });

  for (const width of [1280, 390]) {
    it(`names people, links the change request, keeps the slug whole (${width} px)`, async () => {
      const tab = await openTab(browser, server.url, width);
      await signIn(tab, server.url, owner.jwt);
      const { page, problems } = tab;
      await page.goto('/audit');
      await page.getByTestId('audit-row').first().waitFor();
      const table = page.locator('.audit-table');
      const text = (await table.textContent()) ?? '';
      // No id of a person in the details: their names instead.
      expect(text).not.toContain(dana.id.slice(0, 8));
      expect(text).not.toContain(rob.id.slice(0, 8));
      expect(text).not.toContain('userId');
      const row = (action: string, who: string) =>
        page.getByTestId('audit-row').filter({ hasText: action }).filter({ hasText: who });
      expect(await row('Set environment permission', 'user: Dana').count()).toBe(1);
      expect(await row('Set environment permission', 'user: Rob').count()).toBe(1);
      expect(await row('Removed member', 'user: Rob').count()).toBe(1);
      expect(await row('Approved change request', 'author: Dana').count()).toBe(1);

      // The slug breaks, if at all, only after a hyphen.
      for (const line of (await slugLines(page)).slice(0, -1)) expect(line.endsWith('-')).toBe(true);
      if (width < 600) expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      await screenshot(page, `audit-names-workspace-${width}`);

      // The change request's id is a link to the request.
      const links = page.getByRole('link', { name: `${requestId.slice(0, 8)}…` });
      expect(await links.count()).toBeGreaterThanOrEqual(2);
      await row('Approved change request', 'author: Dana')
        .getByRole('link', { name: `${requestId.slice(0, 8)}…` })
        .click();
      const dialog = page.getByRole('dialog', { name: 'Change request on prod' });
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain('Point at v2');
      expect(page.url()).toContain(`request=${requestId}`);
      await screenshot(page, `audit-names-request-${width}`);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      expect(page.url()).not.toContain('request=');
      expect(page.url()).toContain('tab=requests');
      expect(problems).toEqual([]);
      await tab.context.close();
    });
  }

  it("the project's audit tab names people and links requests too", async () => {
    const tab = await openTab(browser, server.url, 1280);
    await signIn(tab, server.url, owner.jwt);
    const { page, problems } = tab;
    await page.goto(`/projects/${projectId}?tab=audit`);
    await page.getByTestId('audit-row').first().waitFor();
    expect(await page.locator('.audit-table').textContent()).toContain('user: Dana');
    await page
      .getByRole('link', { name: `${requestId.slice(0, 8)}…` })
      .first()
      .click();
    await page.getByRole('dialog', { name: 'Change request on prod' }).waitFor();
    await screenshot(page, 'audit-names-project-1280');
    expect(problems).toEqual([]);
    await tab.context.close();
  });
});
