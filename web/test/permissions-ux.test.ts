/**
 * What a person meets where access is granted and where damage is easy (a user-testing round): read and write
 * in words where they are granted (D22, D23, D31), Protected explained and a change to a protected
 * environment confirmed first, deleting an environment only with its name typed, a delete under approval
 * (D47) that promises no undo, and an import that lets each key be secret or plain. Debian's chromium against
 * the real server; each check is made against the server's own state.
 */
import { listVarsResponse, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer, upsert } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

describe.skipIf(!chromiumAvailable())('permissions and destructive actions in plain words', () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let workspaceId: string;
  let reader: { id: string; jwt: string };

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ env: { LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' } }),
      launch(),
    ]);
    owner = await signupUser(server, 'Owner');
    const session = await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    workspaceId = session.body.user.workspaceId;
    const u = await signupUser(server, 'Reader');
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
    reader = { id: u.user.id, jwt: sw.body.token };
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
  async function serverVars(projectId: string, env: string) {
    const res = await server.request('GET', `/v1/projects/${projectId}/envs/${env}/vars?reveal=true`, {
      token: owner.jwt,
      schema: listVarsResponse,
    });
    return new Map(res.body.vars.map((v) => [v.key, v]));
  }

  for (const width of [1280, 390]) {
    it(`says what read and write allow where they are granted; Protected is explained (${width} px)`, async () => {
      const p = await createProject(server, owner.jwt, { name: `perm-${width}`, envs: ['dev', 'prod'] });
      await upsert(server, owner.jwt, p.id, ['prod'], [{ key: 'DB_PASSWORD', value: 'pw-prod', type: 'secret' }]);
      const added = await server.request('PUT', `/v1/projects/${p.id}/members/${reader.id}`, {
        token: owner.jwt,
        body: { role: 'Read-only' },
      });
      expect(added.status).toBe(200);

      // The Owner grants: the members tab says what read and write mean, and what Protected means.
      const o = await signedIn(owner.jwt, width);
      await o.page.goto(`/projects/${p.id}?tab=members`);
      const legend = o.page.getByTestId('permission-legend');
      await expect.poll(() => legend.textContent()).toContain('can pull them in plain text with a token');
      expect(await legend.textContent()).toContain('can also reveal values here');
      expect(await o.page.locator('.protected-badge').first().getAttribute('title')).toContain(
        'Developers get no access unless granted',
      );
      await screenshot(o.page, `ux-members-owner-${width}`);
      // The token dialog says a read token pulls plain text.
      await o.page.goto('/tokens');
      await o.page.getByRole('button', { name: 'New token' }).first().click();
      const dlg = o.page.getByRole('dialog', { name: 'New access token' });
      await expect.poll(() => dlg.getByTestId('scope-help').textContent()).toContain('in plain text, secrets included');
      await dlg.getByRole('button', { name: 'write', exact: true }).click();
      await expect.poll(() => dlg.getByTestId('scope-help').textContent()).toContain('pulls and pushes');
      await screenshot(o.page, `ux-token-dialog-owner-${width}`);
      // The environment's settings explain protection.
      await o.page.goto(`/projects/${p.id}?env=prod`);
      await expect.poll(() => o.page.getByTestId('protected-help').textContent()).toContain('prod is protected');
      await screenshot(o.page, `ux-vars-prod-owner-${width}`);
      expect(o.problems).toEqual([]);
      await o.context.close();

      // The member with read: masked values, and a note that says a read token pulls them in plain text.
      const r = await signedIn(reader.jwt, width);
      await r.page.goto(`/projects/${p.id}?env=prod`);
      await r.page.getByTestId('value-DB_PASSWORD').waitFor();
      expect(await r.page.getByTestId('value-DB_PASSWORD').textContent()).toBe('••••••••');
      expect(await r.page.getByTestId('read-only-note').textContent()).toContain(
        'a read token you create pulls them in plain text',
      );
      expect(await r.page.getByTestId('protected-help').count()).toBe(0);
      await screenshot(r.page, `ux-vars-prod-reader-${width}`);
      // The workspace audit log is refused to a member: the reason, without filters or exports.
      await r.page.goto('/audit');
      await r.page.getByText('Only for Owners').waitFor();
      expect(await r.page.getByRole('button', { name: 'Export CSV' }).isVisible()).toBe(false);
      expect(await r.page.getByLabel('Filter by action').isVisible()).toBe(false);
      await screenshot(r.page, `ux-audit-reader-${width}`);
      expect(r.problems).toEqual([]);
      await r.context.close();
    });
  }

  it('asks before saving a change to a protected environment; Cancel keeps the form and the server as they were', async () => {
    const p = await createProject(server, owner.jwt, { name: 'guarded', envs: ['dev', 'prod'] });
    await upsert(server, owner.jwt, p.id, ['prod'], [{ key: 'LOG_LEVEL', value: 'info', type: 'plain' }]);
    const { page, context, problems } = await signedIn(owner.jwt, 1280);
    await page.goto(`/projects/${p.id}?env=prod`);
    await page.getByTestId('value-LOG_LEVEL').waitFor();
    await page.getByLabel('New key').fill('NEW_FLAG');
    await page.getByLabel('New value').fill('on');
    await page.getByLabel('Type', { exact: true }).selectOption('plain');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const ask = page.getByRole('dialog', { name: 'Change protected prod?' });
    await expect.poll(() => ask.textContent()).toContain('Add NEW_FLAG in prod, a protected environment');
    await screenshot(page, 'ux-protected-confirm-1280');
    await ask.getByRole('button', { name: 'Cancel' }).click();
    expect((await serverVars(p.id, 'prod')).has('NEW_FLAG')).toBe(false);
    // Nothing was lost: the typed key is still there, and no error is shown for a cancel.
    expect(await page.getByLabel('New key').inputValue()).toBe('NEW_FLAG');
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page
      .getByRole('dialog', { name: 'Change protected prod?' })
      .getByRole('button', { name: 'Save to prod' })
      .click();
    await expect.poll(async () => (await serverVars(p.id, 'prod')).get('NEW_FLAG')?.value).toBe('on');
    // dev is not protected: no question.
    await page.getByRole('tab', { name: 'dev' }).click();
    await page.getByLabel('New key').fill('DEV_ONLY');
    await page.getByLabel('New value').fill('1');
    await page.getByLabel('Type', { exact: true }).selectOption('plain');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await expect.poll(async () => (await serverVars(p.id, 'dev')).get('DEV_ONLY')?.value).toBe('1');
    expect(problems).toEqual([]);
    await context.close();
  });

  for (const width of [1280, 390]) {
    it(`deletes an environment only with its name typed, saying what goes (${width} px)`, async () => {
      const p = await createProject(server, owner.jwt, { name: `del-${width}`, envs: ['dev', 'prod'] });
      const { page, context, problems } = await signedIn(owner.jwt, width);
      await page.goto(`/projects/${p.id}?env=prod`);
      await page.getByRole('button', { name: 'Delete environment' }).click();
      const dlg = page.getByRole('dialog', { name: 'Delete environment prod?' });
      const body = dlg.getByTestId('delete-env-body');
      await expect.poll(() => body.textContent()).toContain('a protected environment');
      for (const what of ['every variable', 'history', 'revisions', 'change requests', 'tokens limited to it']) {
        expect(await body.textContent()).toContain(what);
      }
      const go = dlg.getByRole('button', { name: 'Delete environment' });
      expect(await go.isDisabled()).toBe(true);
      await dlg.getByLabel('Type prod to confirm').fill('pro');
      expect(await go.isDisabled()).toBe(true);
      await screenshot(page, `ux-delete-env-${width}`);
      await dlg.getByLabel('Type prod to confirm').fill('prod');
      await go.click();
      await expect
        .poll(async () => {
          const res = await server.request('GET', `/v1/projects/${p.id}/envs`, { token: owner.jwt });
          return (res.body as { envs: { name: string }[] }).envs.map((e) => e.name);
        })
        .toEqual(['dev']);
      expect(problems).toEqual([]);
      await context.close();
    });
  }

  it('a delete under approval says it joins the change request, with no promise of an undo (D47)', async () => {
    const p = await createProject(server, owner.jwt, { name: 'approvals', envs: ['dev'] });
    await upsert(server, owner.jwt, p.id, ['dev'], [{ key: 'GONE', value: 'x', type: 'plain' }]);
    const patched = await server.request('PATCH', `/v1/projects/${p.id}/envs/dev`, {
      token: owner.jwt,
      body: { requireApproval: true },
    });
    expect(patched.status).toBe(200);
    const added = await server.request('PUT', `/v1/projects/${p.id}/members/${reader.id}`, {
      token: owner.jwt,
      body: { role: 'Developer' },
    });
    expect(added.status).toBe(200);
    const { page, context, problems } = await signedIn(reader.jwt, 1280);
    await page.goto(`/projects/${p.id}?env=dev`);
    await page.getByTestId('value-GONE').waitFor();
    await page.getByRole('button', { name: 'Delete GONE' }).click();
    const dlg = page.getByRole('dialog', { name: 'Delete GONE?' });
    await expect.poll(() => dlg.textContent()).toContain('joins your change request');
    expect(await dlg.textContent()).not.toContain('Undo');
    await screenshot(page, 'ux-delete-var-approval-1280');
    expect(problems).toEqual([]);
    await context.close();
  });

  for (const width of [1280, 390]) {
    it(`import offers secret or plain per key, guessed from the name (${width} px)`, async () => {
      const p = await createProject(server, owner.jwt, { name: `imp-${width}`, envs: ['dev'] });
      const { page, context, problems } = await signedIn(owner.jwt, width);
      await page.goto(`/projects/${p.id}?env=dev`);
      await page.getByRole('button', { name: 'Import .env' }).click();
      const imp = page.getByRole('dialog', { name: 'Import variables' });
      await imp
        .getByLabel('Paste a .env file')
        .fill('LOG_LEVEL=debug\nAPI_TOKEN=t-1\nDB_PASSWORD=pw\nPUBLIC_URL=https://x.example\nREGION=eu\n');
      await expect.poll(() => imp.getByLabel('Type of LOG_LEVEL').inputValue()).toBe('plain');
      expect(await imp.getByLabel('Type of API_TOKEN').inputValue()).toBe('secret');
      expect(await imp.getByLabel('Type of DB_PASSWORD').inputValue()).toBe('secret');
      expect(await imp.getByLabel('Type of PUBLIC_URL').inputValue()).toBe('plain');
      // The person's own choice wins over the guess.
      await imp.getByLabel('Type of REGION').selectOption('secret');
      await screenshot(page, `ux-import-types-${width}`);
      await imp.getByRole('button', { name: 'Save 5 variables' }).click();
      await imp.getByTestId('import-result-dev').waitFor();
      const dev = await serverVars(p.id, 'dev');
      expect(Object.fromEntries([...dev].map(([k, v]) => [k, v.type]))).toEqual({
        LOG_LEVEL: 'plain',
        API_TOKEN: 'secret',
        DB_PASSWORD: 'secret',
        PUBLIC_URL: 'plain',
        REGION: 'secret',
      });
      expect(problems).toEqual([]);
      await context.close();
    });
  }
});
