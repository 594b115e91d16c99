/**
 * The Overview tab in chromium against the real server: every key across the environments the user can read,
 * one row per key, each cell missing / same / differs, secrets "set" until revealed (write; audited); inline
 * edit where the user may write; "Copy here" for a missing key through the bulk upsert, reading a secret only
 * with write on the source. Checked against the server's own state.
 */
import { auditPage, listVarsResponse, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer, upsert } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

describe.skipIf(!chromiumAvailable())('the project overview: every key across environments', () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let dev: { id: string; jwt: string };
  let projectId: string;

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ env: { LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' } }),
      launch(),
    ]);
    owner = await signupUser(server, 'Olivia');
    const session = await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    const p = await createProject(server, owner.jwt, { name: 'shop', envs: ['dev', 'staging', 'prod'] });
    projectId = p.id;
    const put = (envs: string[], key: string, value: string, type: 'plain' | 'secret') =>
      upsert(server, owner.jwt, projectId, envs, [{ key, value, type }]);
    await put(['dev', 'staging'], 'API_URL', 'https://api.example', 'plain');
    await put(['prod'], 'API_URL', 'https://api.prod.example', 'plain');
    await put(['dev', 'staging'], 'DB_PASSWORD', 'same-secret', 'secret');
    await put(['dev'], 'SIGNING_KEY', 'dev-signing', 'secret');
    await put(['staging'], 'SIGNING_KEY', 'staging-signing', 'secret');
    await put(['dev'], 'ONLY_DEV', 'x', 'plain');
    await put(['staging'], 'STAGING_SECRET', 'from-staging', 'secret');

    // Dana: a Developer (write on dev; prod is protected, so none) with staging lowered to read.
    const d = await signupUser(server, 'Dana');
    await server.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: d.email, wsRole: 'Member' },
    });
    const sw = await server.request('POST', '/v1/auth/switch-workspace', {
      token: d.jwt,
      body: { workspaceId: session.body.user.workspaceId },
      schema: switchWorkspaceResponse,
    });
    dev = { id: d.user.id, jwt: sw.body.token };
    await server.request('PUT', `/v1/projects/${projectId}/members/${dev.id}`, {
      token: owner.jwt,
      body: { role: 'Developer' },
    });
    const o = await server.request('PUT', `/v1/projects/${projectId}/members/${dev.id}/envs/staging`, {
      token: owner.jwt,
      body: { permission: 'read' },
    });
    expect(o.status).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function serverVar(env: string, key: string) {
    const res = await server.request('GET', `/v1/projects/${projectId}/envs/${env}/vars?reveal=true`, {
      token: owner.jwt,
      schema: listVarsResponse,
    });
    return res.body.vars.find((v) => v.key === key);
  }
  async function reveals() {
    const res = await server.request('GET', `/v1/projects/${projectId}/audit?action=var.reveal&limit=200`, {
      token: owner.jwt,
      schema: auditPage,
    });
    return res.body.logs.length;
  }
  const cell = (page: Page, key: string, env: string) => page.getByTestId(`overview-${key}-${env}`);
  const state = async (page: Page, key: string, env: string) =>
    (await cell(page, key, env).getAttribute('class'))?.match(/overview-(missing|set|same|differs|unknown)/)?.[1];

  it('compares every key across environments, reveals to compare secrets, edits in place and copies a missing key', async () => {
    const tab = await openTab(browser, server.url, 1280);
    await signIn(tab, server.url, owner.jwt);
    const { page, problems } = tab;
    await page.goto(`/projects/${projectId}?tab=overview`);
    await page.getByTestId('overview-row-API_URL').waitFor();
    expect(await page.locator('[data-testid^="overview-row-"]').count()).toBe(5);

    // Plain values compare; a different one marks the row; secrets read "set", not compared; gaps are "missing".
    expect(await Promise.all(['dev', 'staging', 'prod'].map((e) => state(page, 'API_URL', e)))).toEqual([
      'differs',
      'differs',
      'differs',
    ]);
    expect(await page.getByTestId('overview-row-API_URL').locator('th').textContent()).toContain('differs');
    expect(await Promise.all(['dev', 'staging', 'prod'].map((e) => state(page, 'DB_PASSWORD', e)))).toEqual([
      'set',
      'set',
      'missing',
    ]);
    expect(await Promise.all(['dev', 'staging'].map((e) => state(page, 'SIGNING_KEY', e)))).toEqual(['set', 'set']);
    expect(await page.locator('.overview-table').textContent()).not.toContain('same-secret');

    // Revealing (write, audited) compares the secrets too.
    const before = await reveals();
    await page.getByRole('button', { name: 'Reveal secrets to compare' }).click();
    await expect.poll(() => state(page, 'SIGNING_KEY', 'dev')).toBe('differs');
    expect(await state(page, 'DB_PASSWORD', 'dev')).toBe('same');
    expect(await state(page, 'DB_PASSWORD', 'staging')).toBe('same');
    expect(await reveals()).toBe(before + 3);

    // Inline edit: prod's API_URL made the same as the others.
    await page.getByRole('button', { name: 'Edit API_URL in prod' }).click();
    const input = page.getByLabel('New value of API_URL in prod');
    await input.fill('https://api.example');
    await input.press('Enter');
    await expect.poll(() => state(page, 'API_URL', 'prod')).toBe('same');
    expect((await serverVar('prod', 'API_URL'))?.value).toBe('https://api.example');
    expect((await serverVar('prod', 'API_URL'))?.type).toBe('plain');

    // Copy a missing secret into prod: read from dev (revealed), written with its type.
    await page.getByRole('button', { name: 'Copy DB_PASSWORD to prod' }).click();
    const dlg = page.getByRole('dialog', { name: 'Copy DB_PASSWORD to prod' });
    await dlg.getByRole('button', { name: 'Copy to prod' }).waitFor();
    await screenshot(page, 'overview-copy-1280');
    await dlg.getByRole('button', { name: 'Copy to prod' }).click();
    await dlg.waitFor({ state: 'detached' });
    await expect.poll(() => state(page, 'DB_PASSWORD', 'prod')).toBe('same');
    expect(await serverVar('prod', 'DB_PASSWORD')).toMatchObject({ value: 'same-secret', type: 'secret' });
    await screenshot(page, 'overview-1280');
    expect(problems).toEqual([]);
  });

  it('offers only what the user may do: read-only cells have no edit or copy, a secret they cannot read is not copied', async () => {
    const tab = await openTab(browser, server.url, 390);
    await signIn(tab, server.url, dev.jwt);
    const { page, problems } = tab;
    await page.goto(`/projects/${projectId}?tab=overview`);
    await page.getByTestId('overview-row-API_URL').waitFor();
    // prod (no access) is not a column.
    expect(await page.locator('.overview-table thead th').allTextContents()).toEqual(['Key', ' dev', ' staging']);
    // Write on dev: edit there; read on staging: nothing to press.
    expect(await cell(page, 'API_URL', 'dev').getByRole('button', { name: /Edit/ }).count()).toBe(1);
    expect(await cell(page, 'API_URL', 'staging').getByRole('button').count()).toBe(0);
    expect(await cell(page, 'ONLY_DEV', 'staging').getByRole('button').count()).toBe(0);
    expect(await state(page, 'ONLY_DEV', 'staging')).toBe('missing');

    // STAGING_SECRET is missing in dev (writable) but reading it needs write on staging: the copy is refused.
    await page.getByRole('button', { name: 'Copy STAGING_SECRET to dev' }).click();
    const dlg = page.getByRole('dialog', { name: 'Copy STAGING_SECRET to dev' });
    await dlg.getByText('needs write permission on staging').waitFor();
    expect(await dlg.getByRole('button', { name: 'Copy to dev' }).isDisabled()).toBe(true);
    await screenshot(page, 'overview-copy-refused-390');
    await page.keyboard.press('Escape');
    await dlg.waitFor({ state: 'detached' });
    expect(await serverVar('dev', 'STAGING_SECRET')).toBeUndefined();

    // The page does not scroll sideways on a phone: the table scrolls inside its box.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    await screenshot(page, 'overview-390');
    expect(problems).toEqual([]);
  });
});
