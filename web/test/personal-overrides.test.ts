/**
 * D75 personal overrides in the dashboard (ADR 0031), in chromium against the real server: the Owner sets their
 * own value of a key from its row; the server's own listing of their overrides and a pull with a token they
 * created give it, while a teammate's listing (API and dashboard) shows the team's value and no marker. A value
 * referencing an environment the person cannot read is refused in words and nothing is saved. Edit, remove
 * (the row shows the team's value again without a reload), an orphaned override (its key deleted) shown as not
 * applied with Remove; a protected environment offers nothing (values left from before it was protected are one
 * quiet line); a Read-only member sees no controls but the request for write access.
 */
import { listOverridesResponse, listVarsResponse, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  createToken,
  type ServerProcess,
  signupUser,
  startServer,
  upsert,
} from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

describe.skipIf(!chromiumAvailable())('personal overrides in the dashboard', () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  /** A Developer (write on unprotected environments, none on prod) and a Read-only member of the projects. */
  let teammate: { id: string; jwt: string };
  let reader: { id: string; jwt: string };

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ env: { LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' } }),
      launch(),
    ]);
    owner = await signupUser(server, 'Olivia');
    const session = await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    const workspaceId = session.body.user.workspaceId;
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
    [teammate, reader] = await Promise.all([join('Teo'), join('Rita')]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** What the server holds as `jwt`'s own overrides of `env`, in plain text. */
  const serverOverrides = async (jwt: string, projectId: string, env = 'dev') => {
    const res = await server.request('GET', `/v1/projects/${projectId}/envs/${env}/overrides?reveal=true`, {
      token: jwt,
      schema: listOverridesResponse,
    });
    expect(res.status).toBe(200);
    return new Map(res.body.overrides.map((o) => [o.key, o]));
  };
  /** `jwt`'s listing of `env`, revealed. */
  const serverVars = async (jwt: string, projectId: string, env = 'dev') => {
    const res = await server.request('GET', `/v1/projects/${projectId}/envs/${env}/vars?reveal=true`, {
      token: jwt,
      schema: listVarsResponse,
    });
    return new Map(res.body.vars.map((v) => [v.key, v]));
  };
  const member = async (projectId: string, userId: string, role: string) => {
    const res = await server.request('PUT', `/v1/projects/${projectId}/members/${userId}`, {
      token: owner.jwt,
      body: { role },
    });
    expect(res.status).toBe(200);
  };
  async function signedIn(jwt: string, width: number) {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, jwt);
    return tab;
  }
  const noOverflow = async (page: Page, width: number) => {
    if (width < 600) expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
  };

  for (const width of [1280, 390]) {
    it(`sets, edits and removes one's own value; others keep the team's (${width} px)`, async () => {
      const p = await createProject(server, owner.jwt, {
        name: `mine-${width}-${Date.now().toString(36)}`,
        envs: ['dev', 'qa', 'prod'],
      });
      await upsert(
        server,
        owner.jwt,
        p.id,
        ['dev'],
        [
          { key: 'DB_URL', value: 'postgres://db.internal/app', type: 'secret' },
          { key: 'PORT', value: '8080', type: 'plain' },
          { key: 'OLD_FLAG', value: 'on', type: 'plain' },
        ],
      );
      await upsert(
        server,
        owner.jwt,
        p.id,
        ['prod'],
        [{ key: 'DB_URL', value: 'postgres://prod/app', type: 'secret' }],
      );
      await Promise.all([member(p.id, teammate.id, 'Developer'), member(p.id, reader.id, 'Read-only')]);

      const o = await signedIn(owner.jwt, width);
      const { page } = o;
      await page.goto(`/projects/${p.id}?env=dev`);
      await page.getByTestId('value-PORT').waitFor();
      // Nothing set yet: one quiet line says what "Set my value" is for.
      await page.getByTestId('my-overrides-hint').waitFor();

      // Set my value of a plain key: the editor says who sees it and that the team's value stays.
      await page.getByRole('button', { name: 'Set my value of PORT' }).click();
      const form = page.getByTestId('my-value-form-PORT');
      const note = (await form.getByTestId('my-value-note').textContent()) ?? '';
      expect(note).toContain('Only you will see it');
      expect(note).toContain("The team's value is unchanged");
      // A plain team value is the starting point.
      expect(await page.getByRole('textbox', { name: 'My value of PORT' }).inputValue()).toBe('8080');
      await page.getByRole('textbox', { name: 'My value of PORT' }).fill('3000');
      await noOverflow(page, width);
      await screenshot(page, `overrides-editor-${width}`);
      await form.getByRole('button', { name: 'Save my value' }).click();
      await expect.poll(async () => (await serverOverrides(owner.jwt, p.id)).get('PORT')?.value).toBe('3000');
      // Without a reload the row shows the value this person now gets, marked.
      await expect.poll(() => page.getByTestId('value-PORT').textContent()).toBe('3000');
      await page.getByTestId('overridden-PORT').waitFor();
      await page.getByTestId('mine-PORT').waitFor();

      // A secret: empty to start (the team's value is masked), saved, still masked in the row until revealed.
      await page.getByRole('button', { name: 'Set my value of DB_URL' }).click();
      expect(await page.getByRole('textbox', { name: 'My value of DB_URL' }).inputValue()).toBe('');
      await page.getByRole('textbox', { name: 'My value of DB_URL' }).fill('postgres://localhost/olivia');
      await page.getByRole('textbox', { name: 'My value of DB_URL' }).press('Control+Enter');
      await expect
        .poll(async () => (await serverOverrides(owner.jwt, p.id)).get('DB_URL')?.value)
        .toBe('postgres://localhost/olivia');
      await page.getByTestId('overridden-DB_URL').waitFor();
      expect(await page.getByTestId('value-DB_URL').textContent()).toBe('••••••••');
      await page.getByRole('button', { name: 'Reveal DB_URL' }).click();
      await expect.poll(() => page.getByTestId('value-DB_URL').textContent()).toBe('postgres://localhost/olivia');

      // The team's value is not shown as a starting point when editing it in an overridden row.
      await page.getByRole('button', { name: 'Edit DB_URL', exact: true }).click();
      expect(await page.getByLabel('Value of DB_URL', { exact: true }).inputValue()).toBe('');
      expect(await page.getByTestId('edit-team-note').textContent()).toContain("this edits the team's value");
      await page.getByRole('button', { name: 'Cancel' }).click();

      // A pull with a token the Owner created gets their values; the shared ones are untouched.
      const ownerToken = (await createToken(server, owner.jwt, { projectId: p.id })).token;
      const pulled = await server.request('GET', `/v1/projects/${p.id}/envs/dev/pull?metadata=false`, {
        token: ownerToken,
      });
      expect(pulled.text).toContain('PORT=3000\n');
      expect(pulled.text).toContain('DB_URL=postgres://localhost/olivia\n');
      const theirs = await serverVars(teammate.jwt, p.id);
      expect(theirs.get('PORT')).toMatchObject({ value: '8080' });
      expect(theirs.get('PORT')?.overridden).toBeUndefined();
      expect(theirs.get('DB_URL')).toMatchObject({ value: 'postgres://db.internal/app' });
      expect(theirs.get('DB_URL')?.overridden).toBeUndefined();

      // The "My overrides" section lists both, applied.
      const mine = page.getByTestId('my-overrides');
      await expect.poll(() => mine.getByTestId('my-override-PORT').textContent()).toContain('applied');
      expect(await mine.getByTestId('my-override-DB_URL').textContent()).toContain('applied');
      await noOverflow(page, width);
      await screenshot(page, `overrides-owner-${width}`);

      // Edit my value: it starts from the person's own value.
      await page.getByRole('button', { name: 'Edit my value of PORT' }).first().click();
      await expect.poll(() => page.getByRole('textbox', { name: 'My value of PORT' }).inputValue()).toBe('3000');
      await page.getByRole('textbox', { name: 'My value of PORT' }).fill('3001');
      await page.getByTestId('my-value-form-PORT').getByRole('button', { name: 'Save my value' }).click();
      await expect.poll(async () => (await serverOverrides(owner.jwt, p.id)).get('PORT')?.value).toBe('3001');
      await expect.poll(() => page.getByTestId('value-PORT').textContent()).toBe('3001');

      // Remove my value: back to the team's, and the marker goes, without a reload.
      await page.getByTestId('mine-PORT').getByRole('button', { name: 'Remove my value of PORT' }).click();
      await expect.poll(async () => (await serverOverrides(owner.jwt, p.id)).has('PORT')).toBe(false);
      await expect.poll(() => page.getByTestId('value-PORT').textContent()).toBe('8080');
      expect(await page.getByTestId('overridden-PORT').count()).toBe(0);
      expect(await mine.getByTestId('my-override-PORT').count()).toBe(0);

      // Orphaned: a value of a key deleted since is listed as not applied, with Remove.
      await page.getByRole('button', { name: 'Set my value of OLD_FLAG' }).click();
      await page.getByRole('textbox', { name: 'My value of OLD_FLAG' }).fill('off');
      await page.getByTestId('my-value-form-OLD_FLAG').getByRole('button', { name: 'Save my value' }).click();
      await expect.poll(async () => (await serverOverrides(owner.jwt, p.id)).has('OLD_FLAG')).toBe(true);
      const del = await server.request('DELETE', `/v1/projects/${p.id}/envs/dev/vars/OLD_FLAG`, { token: owner.jwt });
      expect(del.status).toBe(204);
      await page.reload();
      const orphan = page.getByTestId('my-override-OLD_FLAG');
      await expect.poll(() => orphan.textContent()).toContain('not applied — the key was deleted');
      expect((await serverOverrides(owner.jwt, p.id)).get('OLD_FLAG')?.orphaned).toBe(true);
      await noOverflow(page, width);
      await screenshot(page, `overrides-orphaned-${width}`);
      await orphan.getByRole('button', { name: 'Remove my value of OLD_FLAG' }).click();
      await expect.poll(async () => (await serverOverrides(owner.jwt, p.id)).has('OLD_FLAG')).toBe(false);
      await expect.poll(() => orphan.count()).toBe(0);

      // Protected prod: no personal controls at all, and nothing said (the Owner has none there).
      await page.goto(`/projects/${p.id}?env=prod`);
      await page.getByTestId('value-DB_URL').waitFor();
      expect(await page.getByRole('button', { name: /Set my value/ }).count()).toBe(0);
      expect(await page.getByTestId('my-overrides-hint').count()).toBe(0);
      expect(await page.getByTestId('my-overrides').count()).toBe(0);
      expect(await page.getByTestId('overrides-need-write').count()).toBe(0);

      // qa protected after a value was set there: one quiet line, the value not applied, Remove still offered.
      await upsert(server, owner.jwt, p.id, ['qa'], [{ key: 'PORT', value: '9000', type: 'plain' }]);
      const set = await server.request('PUT', `/v1/projects/${p.id}/envs/qa/overrides/PORT`, {
        token: owner.jwt,
        body: { value: '1234' },
      });
      expect(set.status).toBe(200);
      const prot = await server.request('PATCH', `/v1/projects/${p.id}/envs/qa`, {
        token: owner.jwt,
        body: { protected: true },
      });
      expect(prot.status).toBe(200);
      await page.goto(`/projects/${p.id}?env=qa`);
      await expect.poll(() => page.getByTestId('value-PORT').textContent()).toBe('9000');
      expect(await page.getByTestId('overridden-PORT').count()).toBe(0);
      expect(await page.getByTestId('overrides-unavailable').textContent()).toContain(
        'Personal values are not available in protected environments',
      );
      expect(await page.getByRole('button', { name: /Set my value/ }).count()).toBe(0);
      await noOverflow(page, width);
      await screenshot(page, `overrides-protected-${width}`);
      await page.getByRole('button', { name: 'Remove my value of PORT' }).click();
      await expect.poll(async () => (await serverOverrides(owner.jwt, p.id, 'qa')).has('PORT')).toBe(false);
      await expect.poll(() => page.getByTestId('overrides-unavailable').count()).toBe(0);
      expect(o.problems).toEqual([]);
      await o.context.close();

      // The teammate's dashboard: the team's values and no marker; a reference they cannot read is refused.
      const t = await signedIn(teammate.jwt, width);
      await t.page.goto(`/projects/${p.id}?env=dev`);
      await expect.poll(() => t.page.getByTestId('value-PORT').textContent()).toBe('8080');
      expect(await t.page.getByTestId('overridden-DB_URL').count()).toBe(0);
      expect(await t.page.getByTestId('my-overrides').count()).toBe(0);
      await t.page.getByRole('button', { name: 'Set my value of PORT' }).click();
      await t.page.getByRole('textbox', { name: 'My value of PORT' }).fill('${prod.DB_URL}');
      await t.page.getByTestId('my-value-form-PORT').getByRole('button', { name: 'Save my value' }).click();
      const refused = t.page.getByTestId('my-value-unresolved');
      await expect.poll(() => refused.textContent()).toContain('Not saved');
      expect(await refused.textContent()).toContain('Reference not readable');
      expect((await serverOverrides(teammate.jwt, p.id)).size).toBe(0);
      // The form keeps what was typed.
      expect(await t.page.getByRole('textbox', { name: 'My value of PORT' }).inputValue()).toBe('${prod.DB_URL}');
      await noOverflow(t.page, width);
      await screenshot(t.page, `overrides-refused-${width}`);
      expect(t.problems).toEqual([]);
      await t.context.close();

      // A Read-only member: no personal controls, but the request for write where values could be set.
      const r = await signedIn(reader.jwt, width);
      await r.page.goto(`/projects/${p.id}?env=dev`);
      await r.page.getByTestId('value-PORT').waitFor();
      expect(await r.page.getByRole('button', { name: /my value/ }).count()).toBe(0);
      const ask = r.page.getByTestId('overrides-need-write');
      await expect.poll(() => ask.textContent()).toContain('needs write access to dev');
      await ask.getByRole('button', { name: 'Request access' }).click();
      const dlg = r.page.getByRole('dialog', { name: 'Request access to dev' });
      expect(await dlg.getByLabel('Permission').inputValue()).toBe('write');
      await noOverflow(r.page, width);
      await screenshot(r.page, `overrides-reader-request-${width}`);
      await dlg.getByRole('button', { name: 'Cancel' }).click();
      await noOverflow(r.page, width);
      await screenshot(r.page, `overrides-reader-${width}`);
      // In protected prod a reader is offered nothing either: personal values are not available there.
      await r.page.goto(`/projects/${p.id}?env=prod`);
      await r.page.getByTestId('value-DB_URL').waitFor();
      expect(await r.page.getByTestId('overrides-need-write').count()).toBe(0);
      expect(r.problems).toEqual([]);
      await r.context.close();
    });
  }
});
