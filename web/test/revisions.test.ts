/**
 * The Revisions tab in chromium against the real server: the timeline of an environment (D44), a past state
 * (masked, revealed only with write), and rollback (D45) through a dialog that previews the change and sends
 * `If-Match`, so a change made meanwhile is refused instead of undone (D46). A member with read sees the
 * timeline and no rollback; the tab works at 390 px. Screenshots go to test-artifacts/.
 */
import { revisionsResponse, sessionResponse, switchWorkspaceResponse, variable } from '@svcenv/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProject, type ServerProcess, signupUser, startServer, upsert } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

const varsList = z.object({ vars: z.array(variable) });

describe.skipIf(!chromiumAvailable())('revisions and rollback in the dashboard (D44, D45, D46)', () => {
  let server: ServerProcess;
  let browser: Browser;
  let ownerJwt: string;
  let readerJwt: string;
  let projectId: string;

  const revisions = async (env: string) =>
    (
      await server.request('GET', `/v1/projects/${projectId}/envs/${env}/revisions?limit=200`, {
        token: ownerJwt,
        schema: revisionsResponse,
      })
    ).body.revisions;
  const plainVars = async (env: string) =>
    Object.fromEntries(
      (
        await server.request('GET', `/v1/projects/${projectId}/envs/${env}/vars?reveal=true`, {
          token: ownerJwt,
          schema: varsList,
        })
      ).body.vars.map((v) => [v.key, v.value]),
    );

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer({ env: { LOG_LEVEL: 'warn' } }), launch()]);
    const owner = await signupUser(server, 'Owner');
    ownerJwt = owner.jwt;
    const session = await server.request('GET', '/v1/auth/session', { token: ownerJwt, schema: sessionResponse });
    const p = await createProject(server, ownerJwt, { name: 'shop', envs: ['dev', 'prod'] });
    projectId = p.id;

    // prod: revision 1 creates two keys, 2 changes one and adds one, 3 deletes the secret.
    await upsert(
      server,
      ownerJwt,
      projectId,
      ['prod'],
      [
        { key: 'API_URL', value: 'https://v1.example.com', type: 'plain' },
        { key: 'DB_PASSWORD', value: 'hunter2-prod', type: 'secret' },
      ],
    );
    await upsert(
      server,
      ownerJwt,
      projectId,
      ['prod'],
      [
        { key: 'API_URL', value: 'https://v2.example.com', type: 'plain' },
        { key: 'NEW_FLAG', value: 'on', type: 'plain' },
      ],
    );
    const del = await server.request('DELETE', `/v1/projects/${projectId}/envs/prod/vars/DB_PASSWORD`, {
      token: ownerJwt,
    });
    expect(del.status).toBe(204);
    // dev: more revisions than one page of the timeline (20), for "Load more".
    for (let i = 1; i <= 23; i++) {
      await upsert(server, ownerJwt, projectId, ['dev'], [{ key: 'COUNTER', value: String(i), type: 'plain' }]);
    }

    // A Developer with read on prod (and write on dev, the default).
    const reader = await signupUser(server, 'Reader');
    const inv = await server.request('POST', '/v1/workspace/invites', {
      token: ownerJwt,
      body: { email: reader.email, wsRole: 'Member' },
    });
    expect(inv.status).toBe(200);
    const sw = await server.request('POST', '/v1/auth/switch-workspace', {
      token: reader.jwt,
      body: { workspaceId: session.body.user.workspaceId },
      schema: switchWorkspaceResponse,
    });
    readerJwt = sw.body.token;
    const added = await server.request('PUT', `/v1/projects/${projectId}/members/${reader.user.id}`, {
      token: ownerJwt,
      body: { role: 'Developer' },
    });
    expect(added.status).toBe(200);
    const perm = await server.request('PUT', `/v1/projects/${projectId}/members/${reader.user.id}/envs/prod`, {
      token: ownerJwt,
      body: { permission: 'read' },
    });
    expect(perm.status).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function signedIn(jwt: string, width: number) {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, jwt);
    return tab;
  }
  async function openRevisions(page: Page, env: string) {
    await page.goto(`/projects/${projectId}?tab=revisions&env=${env}`);
    await page.getByRole('tab', { name: 'Revisions' }).and(page.locator('[aria-selected="true"]')).waitFor();
    await page.locator('.revision').first().waitFor();
  }
  const texts = (page: Page, testId: string) => page.getByTestId(testId).locator('.var-key').allTextContents();
  /** Nothing sticks out sideways at phone width: the page does not scroll horizontally. */
  const noSideScroll = (page: Page) =>
    page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

  it('shows the timeline newest first, a past state, and rolls back with a previewed diff (1280 px)', async () => {
    const { page, context, problems } = await signedIn(ownerJwt, 1280);
    await openRevisions(page, 'prod');

    // The timeline: newest first, who, when (exact on hover), the action in words and the keys.
    const items = page.locator('.revision');
    expect(await items.count()).toBe(3);
    expect(await items.locator('.revision-num').allTextContents()).toEqual(['#3', '#2', '#1']);
    const r3 = page.getByTestId('revision-3');
    await expect.poll(() => r3.textContent()).toContain('Deleted a variable');
    expect(await r3.textContent()).toContain('by Owner');
    expect(await r3.textContent()).toContain('current');
    expect(await r3.getByTestId('keys-deleted').textContent()).toContain('DB_PASSWORD');
    const time = r3.locator('time');
    expect(await time.textContent()).toBe('just now');
    expect(await time.getAttribute('title')).toMatch(/\d{4}/);
    const r2 = page.getByTestId('revision-2');
    expect(await r2.textContent()).toContain('Saved variables');
    expect(await r2.getByTestId('keys-created').textContent()).toContain('NEW_FLAG');
    expect(await r2.getByTestId('keys-updated').textContent()).toContain('API_URL');
    expect(await page.getByTestId('revision-1').getByTestId('keys-created').locator('.chip').allTextContents()).toEqual(
      ['API_URL', 'DB_PASSWORD'],
    );
    // The current revision is no rollback target (it would change nothing); each earlier one is.
    expect(await r3.getByRole('button', { name: /^Roll back to here/ }).count()).toBe(0);
    expect(await r2.getByRole('button', { name: /^Roll back to here/ }).count()).toBe(1);
    await screenshot(page, 'revisions-timeline-1280');

    // Revision 1 as it was: a past state, read-only, masked until revealed.
    await page.getByRole('button', { name: 'View revision 1' }).click();
    const view = page.getByRole('dialog', { name: 'prod at revision 1' });
    await view.waitFor();
    expect(await view.getByTestId('past-state').textContent()).toContain('Past state, read-only');
    const table = view.getByRole('table', { name: 'Variables of prod at revision 1' });
    await table.waitFor();
    expect(await table.locator('.var-key').allTextContents()).toEqual(['API_URL', 'DB_PASSWORD']);
    expect(await table.textContent()).toContain('https://v1.example.com');
    expect(await table.textContent()).not.toContain('hunter2-prod');
    expect(await table.textContent()).toContain('••••••••');
    // Nothing to edit in a past state.
    expect(await view.locator('input, textarea, select').count()).toBe(0);
    await view.getByRole('button', { name: 'Reveal values' }).click();
    await expect.poll(() => table.textContent()).toContain('hunter2-prod');
    await screenshot(page, 'revisions-view-1280');
    await view.getByRole('button', { name: 'Close' }).click();

    // Roll back to revision 1: the dialog shows what will be created, updated and deleted, masked.
    await page.getByRole('button', { name: 'Roll back to here: revision 1' }).click();
    const dlg = page.getByRole('dialog', { name: 'Roll back prod to revision 1' });
    await dlg.getByTestId('rollback-summary').waitFor();
    expect(await texts(page, 'rollback-create')).toEqual(['DB_PASSWORD']);
    expect(await texts(page, 'rollback-update')).toEqual(['API_URL']);
    expect(await texts(page, 'rollback-delete')).toEqual(['NEW_FLAG']);
    const update = await dlg.getByTestId('rollback-update').textContent();
    expect(update).toContain('https://v2.example.com');
    expect(update).toContain('https://v1.example.com');
    expect(await dlg.getByTestId('rollback-create').textContent()).toContain('••••••••');
    expect(await dlg.textContent()).toContain('#3');
    await dlg.getByRole('button', { name: 'Reveal values' }).click();
    await expect.poll(() => dlg.getByTestId('rollback-create').textContent()).toContain('hunter2-prod');
    await screenshot(page, 'revisions-rollback-1280');

    await dlg.getByRole('button', { name: 'Roll back', exact: true }).click();
    await page.locator('.toast', { hasText: 'prod rolled back to revision 1: now revision 4' }).waitFor();
    // The variables, fresh from the server, are those of revision 1 again.
    await expect.poll(() => new URL(page.url()).searchParams.get('tab')).toBe('vars');
    const panel = page.locator('section[aria-label="Variables of prod"]');
    await expect.poll(() => panel.textContent()).toContain('https://v1.example.com');
    expect(await panel.textContent()).toContain('DB_PASSWORD');
    expect(await panel.textContent()).not.toContain('NEW_FLAG');
    expect(await plainVars('prod')).toEqual({ API_URL: 'https://v1.example.com', DB_PASSWORD: 'hunter2-prod' });
    const after = await revisions('prod');
    expect(after[0]).toMatchObject({
      revision: 4,
      action: 'env.rollback',
      created: ['DB_PASSWORD'],
      updated: ['API_URL'],
      deleted: ['NEW_FLAG'],
    });
    await screenshot(page, 'revisions-after-rollback-1280');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('refuses a rollback when prod changed after the dialog compared, and compares again (D46)', async () => {
    const { page, context, problems } = await signedIn(ownerJwt, 1280);
    await openRevisions(page, 'prod');
    const current = (await revisions('prod'))[0]!.revision;
    await page.getByRole('button', { name: 'Roll back to here: revision 2' }).click();
    const dlg = page.getByRole('dialog', { name: 'Roll back prod to revision 2' });
    await dlg.getByTestId('rollback-summary').waitFor();
    expect(await texts(page, 'rollback-create')).toEqual(['NEW_FLAG']);
    expect(await texts(page, 'rollback-update')).toEqual(['API_URL']);
    expect(await dlg.getByTestId('rollback-delete').count()).toBe(0);
    // The rollback to revision 1 saved DB_PASSWORD again with the same value: masked, only its value could
    // tell, so it is listed apart; revealed, the values show it is equal and it drops out.
    expect(await texts(page, 'rollback-unsure')).toEqual(['DB_PASSWORD']);
    await dlg.getByRole('button', { name: 'Reveal values' }).click();
    // The comparison is made again with the values: wait for it before reading it.
    await dlg.getByRole('button', { name: 'Hide values' }).waitFor();
    expect(await dlg.getByTestId('rollback-unsure').count()).toBe(0);
    expect(await texts(page, 'rollback-update')).toEqual(['API_URL']);

    // A colleague saves a change while the dialog is open.
    await upsert(server, ownerJwt, projectId, ['prod'], [{ key: 'HOTFIX', value: 'yes', type: 'plain' }]);
    await dlg.getByRole('button', { name: 'Roll back', exact: true }).click();
    const stale = dlg.getByTestId('rollback-stale');
    await stale.waitFor();
    expect(await stale.textContent()).toContain('prod changed since you opened this; review again');
    // Nothing was rolled back: the colleague's change stands and no revision was made.
    expect((await revisions('prod'))[0]).toMatchObject({ revision: current + 1, created: ['HOTFIX'] });
    expect(await plainVars('prod')).toHaveProperty('HOTFIX', 'yes');
    expect(await dlg.getByRole('button', { name: 'Roll back', exact: true }).count()).toBe(0);
    await screenshot(page, 'revisions-stale-1280');

    // Compared again, the preview includes the colleague's key, and this time the rollback goes through.
    await stale.getByRole('button', { name: 'Review again' }).click();
    await expect.poll(() => texts(page, 'rollback-delete')).toEqual(['HOTFIX']);
    expect(await dlg.getByTestId('rollback-unsure').count()).toBe(0);
    expect(await dlg.textContent()).toContain(`#${current + 1}`);
    await dlg.getByRole('button', { name: 'Roll back', exact: true }).click();
    await page.locator('.toast', { hasText: `prod rolled back to revision 2: now revision ${current + 2}` }).waitFor();
    expect(await plainVars('prod')).toEqual({
      API_URL: 'https://v2.example.com',
      DB_PASSWORD: 'hunter2-prod',
      NEW_FLAG: 'on',
    });
    // The equal secret was left alone (D45): only the keys that differed were touched.
    expect((await revisions('prod'))[0]).toMatchObject({
      action: 'env.rollback',
      created: ['NEW_FLAG'],
      updated: ['API_URL'],
      deleted: ['HOTFIX'],
    });
    expect(problems).toEqual([]);
    await context.close();
  });

  it('pages the timeline with "Load more"', async () => {
    const { page, context, problems } = await signedIn(ownerJwt, 1280);
    await openRevisions(page, 'dev');
    const nums = () => page.locator('.revision-num').allTextContents();
    expect((await nums()).length).toBe(20);
    expect((await nums())[0]).toBe('#23');
    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(async () => (await nums()).length).toBe(23);
    expect((await nums()).at(-1)).toBe('#1');
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    // Only the newest revision is marked current, not the first of a later page.
    expect(await page.locator('.revision', { hasText: 'current' }).count()).toBe(1);
    expect(problems).toEqual([]);
    await context.close();
  });

  for (const width of [1280, 390]) {
    it(`a member with read on prod sees the timeline and past states, but no rollback or reveal (${width} px)`, async () => {
      const { page, context, problems } = await signedIn(readerJwt, width);
      await openRevisions(page, 'prod');
      expect(await page.locator('.revision').count()).toBeGreaterThanOrEqual(4);
      expect(await page.getByRole('button', { name: /^Roll back/ }).count()).toBe(0);
      expect(await page.getByTestId('read-only-note').textContent()).toContain('read access to prod');
      await page.getByRole('button', { name: 'View revision 1' }).click();
      const view = page.getByRole('dialog', { name: 'prod at revision 1' });
      const table = view.getByRole('table');
      await table.waitFor();
      expect(await table.textContent()).toContain('••••••••');
      expect(await table.textContent()).not.toContain('hunter2-prod');
      expect(await view.getByRole('button', { name: 'Reveal values' }).count()).toBe(0);
      expect(await view.textContent()).toContain('you need write permission');
      if (width === 390) expect(await noSideScroll(page)).toBe(true);
      await screenshot(page, `revisions-readonly-view-${width}`);
      await view.getByRole('button', { name: 'Close' }).click();
      await screenshot(page, `revisions-readonly-${width}`);
      // On dev, where the same member may write, rollback is offered.
      await page.getByRole('tab', { name: /dev/ }).click();
      await page.getByRole('button', { name: 'Roll back to here: revision 22' }).waitFor();
      expect(await page.getByTestId('read-only-note').count()).toBe(0);
      expect(problems).toEqual([]);
      await context.close();
    });
  }

  it('is usable at 390 px: timeline, past state and rollback preview fit the screen', async () => {
    const { page, context, problems } = await signedIn(ownerJwt, 390);
    await openRevisions(page, 'prod');
    expect(await noSideScroll(page)).toBe(true);
    const rollbackBtn = page.getByRole('button', { name: 'Roll back to here: revision 1' });
    await rollbackBtn.scrollIntoViewIfNeeded();
    const box = await rollbackBtn.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    await screenshot(page, 'revisions-timeline-390');

    await page.getByRole('button', { name: 'View revision 2' }).click();
    const view = page.getByRole('dialog', { name: 'prod at revision 2' });
    await view.getByRole('table').waitFor();
    await view.getByRole('button', { name: 'Reveal values' }).click();
    await expect.poll(() => view.getByRole('table').textContent()).toContain('hunter2-prod');
    expect(await noSideScroll(page)).toBe(true);
    await screenshot(page, 'revisions-view-390');
    await view.getByRole('button', { name: 'Close' }).click();

    await rollbackBtn.click();
    const dlg = page.getByRole('dialog', { name: 'Roll back prod to revision 1' });
    await dlg.getByTestId('rollback-summary').waitFor();
    const dbox = await dlg.boundingBox();
    expect(dbox && dbox.x >= 0 && dbox.x + dbox.width <= 390).toBe(true);
    const confirm = dlg.getByRole('button', { name: 'Roll back', exact: true });
    await confirm.scrollIntoViewIfNeeded();
    expect(await confirm.isVisible()).toBe(true);
    await screenshot(page, 'revisions-rollback-390');
    await dlg.getByRole('button', { name: 'Cancel' }).click();
    expect(problems).toEqual([]);
    await context.close();
  });
});
