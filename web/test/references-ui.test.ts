/**
 * References across environments and projects in the variables screen (D49): a value
 * shows where each reference points and whether the user can read it (the resolved value masked as the
 * listing masks it, D26); a reference the user may not read says so and shows nothing of the target; typing
 * `${` completes keys, `env.KEY` and `slug.env.KEY`, by keyboard. Debian's chromium against the real server.
 */
import { listVarsResponse, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer, upsert } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

describe.skipIf(!chromiumAvailable())('references across environments in the dashboard (D49)', () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let app: Awaited<ReturnType<typeof createProject>>;
  let infra: Awaited<ReturnType<typeof createProject>>;
  const STAGING_SECRET = 'stg-secret-7f3a9c21';
  const PROD_SECRET = 'prod-secret-c0ffee42';
  const INFRA_HOST = 'infra-db.prod.internal';

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ env: { LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' } }),
      launch(),
    ]);
    owner = await signupUser(server, 'Owner');
    app = await createProject(server, owner.jwt, { name: 'Checkout app', envs: ['dev', 'staging', 'prod'] });
    infra = await createProject(server, owner.jwt, { name: 'Shared infra', envs: ['prod'] });
    await upsert(
      server,
      owner.jwt,
      app.id,
      ['staging'],
      [
        { key: 'DB_HOST', value: 'staging-db.internal', type: 'plain' },
        { key: 'DB_PASSWORD', value: STAGING_SECRET, type: 'secret' },
      ],
    );
    await upsert(server, owner.jwt, app.id, ['prod'], [{ key: 'PROD_KEY', value: PROD_SECRET, type: 'secret' }]);
    await upsert(server, owner.jwt, infra.id, ['prod'], [{ key: 'DB_HOST', value: INFRA_HOST, type: 'plain' }]);
    await upsert(
      server,
      owner.jwt,
      app.id,
      ['dev'],
      [
        { key: 'DATABASE_URL', value: 'postgres://${staging.DB_HOST}/app', type: 'plain' },
        { key: 'STAGING_PW', value: 'pw=${staging.DB_PASSWORD}', type: 'plain' },
        { key: 'INFRA_HOST', value: `\${${infra.slug}.prod.DB_HOST}`, type: 'plain' },
        { key: 'TO_PROD', value: '${prod.PROD_KEY}', type: 'plain' },
        { key: 'LOCAL', value: 'plain-local', type: 'plain' },
      ],
    );
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** A Developer of the app (no access to prod, not a member of the infra project). */
  async function developer() {
    const u = await signupUser(server, 'Dev');
    const session = await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    const inv = await server.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: u.email, wsRole: 'Member' },
    });
    expect(inv.status).toBe(200);
    const sw = await server.request('POST', '/v1/auth/switch-workspace', {
      token: u.jwt,
      body: { workspaceId: session.body.user.workspaceId },
      schema: switchWorkspaceResponse,
    });
    expect(sw.status).toBe(200);
    const added = await server.request('PUT', `/v1/projects/${app.id}/members/${u.user.id}`, {
      token: owner.jwt,
      body: { role: 'Developer' },
    });
    expect(added.status).toBe(200);
    const none = await server.request('PUT', `/v1/projects/${app.id}/members/${u.user.id}/envs/prod`, {
      token: owner.jwt,
      body: { permission: 'none' },
    });
    expect(none.status).toBe(200);
    return sw.body.token;
  }

  async function openDev(jwt: string, width: number) {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, jwt);
    await tab.page.goto(`/projects/${app.id}?env=dev`);
    await tab.page.getByTestId('value-LOCAL').waitFor();
    return tab;
  }

  const text = (page: Page, id: string) => page.getByTestId(id).first().innerText();

  for (const width of [1280, 390]) {
    it(`a cross-environment reference shows its target and the value masked as the listing masks it (${width} px)`, async () => {
      const { page, context, problems } = await openDev(owner.jwt, width);
      expect(await text(page, 'targets-DATABASE_URL')).toMatch(/→ staging\.DB_HOST\s+readable by you/);
      expect(await text(page, 'resolved-DATABASE_URL')).toContain('postgres://staging-db.internal/app');
      // A plain value reaching a secret: the target is named, the resolved value masked (D26).
      expect(await text(page, 'targets-STAGING_PW')).toContain('→ staging.DB_PASSWORD');
      expect(await text(page, 'resolved-STAGING_PW')).toContain('••••••••');
      // Another project by slug, shown as slug/env.KEY once the projects are known.
      await expect
        .poll(() => text(page, 'targets-INFRA_HOST'))
        .toMatch(new RegExp(`→ ${infra.slug}/prod\\.DB_HOST\\s+readable by you`));
      expect(await text(page, 'resolved-INFRA_HOST')).toContain(INFRA_HOST);
      expect(await page.content()).not.toContain(STAGING_SECRET);
      await screenshot(page, `references-targets-${width}`);
      expect(problems).toEqual([]);
      await context.close();
    });
  }

  it('a reference to an environment the Developer cannot read says so, without any value', async () => {
    const { page, context, problems } = await openDev(await developer(), 1280);
    expect(await text(page, 'targets-TO_PROD')).toMatch(
      /→ prod\.PROD_KEY\s+⚠ cannot be read with your access, or does not exist/,
    );
    await expect
      .poll(() => text(page, 'targets-INFRA_HOST'))
      .toContain(`→ ${infra.slug}/prod.DB_HOST ⚠ cannot be read with your access, or does not exist`);
    expect(await text(page, 'problem-TO_PROD')).toContain('Cannot resolve');
    expect(await page.getByTestId('resolved-TO_PROD').count()).toBe(0);
    const html = await page.content();
    expect(html).not.toContain(PROD_SECRET);
    expect(html).not.toContain(INFRA_HOST);
    // What the Developer may read still resolves.
    expect(await text(page, 'targets-DATABASE_URL')).toMatch(/→ staging\.DB_HOST\s+readable by you/);
    await screenshot(page, 'references-forbidden-1280');
    expect(problems).toEqual([]);
    await context.close();
  });

  for (const width of [1280, 390]) {
    it(`typing \${ completes staging.DB_HOST by keyboard, loading staging's keys only then (${width} px)`, async () => {
      const { page, context, problems } = await openDev(owner.jwt, width);
      const listed: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/vars')) listed.push(new URL(r.url()).pathname);
      });
      const key = `NEW_${width}`;
      await page.getByLabel('New key').fill(key);
      const field = page.getByLabel('New value');
      await field.click();
      await field.pressSequentially('jdbc:${');
      const list = page.getByRole('listbox', { name: 'References' });
      // This environment's keys, the project's other readable environments, the other project.
      await expect.poll(() => list.innerText()).toContain(`${infra.slug}.`);
      const options = await list.getByRole('option').allInnerTexts();
      expect(options).toEqual(expect.arrayContaining(['DATABASE_URL', 'LOCAL', 'staging. …', 'prod. …']));
      expect(listed.some((p) => p.includes('/envs/staging/'))).toBe(false);
      // Escape closes the list and leaves the text; typing on opens it again.
      await field.press('Escape');
      expect(await list.isHidden()).toBe(true);
      await field.pressSequentially('sta');
      // Keys match whatever their case; environments follow this environment's keys.
      await expect.poll(() => list.getByRole('option').allInnerTexts()).toEqual(['STAGING_PW', 'staging. …']);
      // Arrow down to the environment (the list may still settle after the last keystroke: move until it is
      // the selected option), then Enter.
      await expect
        .poll(async () => {
          await field.press('ArrowDown');
          return list.getByRole('option', { selected: true }).innerText();
        })
        .toBe('staging. …');
      await field.press('Enter');
      expect(await field.inputValue()).toBe('jdbc:${staging.');
      // Now staging's keys are loaded (keys only: no value of staging appears).
      await expect
        .poll(() => list.getByRole('option').allInnerTexts())
        .toEqual(['staging.DB_HOST', 'staging.DB_PASSWORD']);
      expect(listed.some((p) => p.includes('/envs/staging/'))).toBe(true);
      expect(await list.innerText()).not.toContain('staging-db.internal');
      await field.press('ArrowDown');
      expect(await list.getByRole('option', { selected: true }).innerText()).toBe('staging.DB_PASSWORD');
      await field.press('ArrowUp');
      await screenshot(page, `references-completion-${width}`);
      await field.press('Enter');
      expect(await field.inputValue()).toBe('jdbc:${staging.DB_HOST}');
      expect(await list.isHidden()).toBe(true);
      await field.press('Enter');
      await page.getByTestId(`value-${key}`).waitFor();
      const res = await server.request('GET', `/v1/projects/${app.id}/envs/dev/vars?reveal=true`, {
        token: owner.jwt,
        schema: listVarsResponse,
      });
      expect(res.body.vars.find((v) => v.key === key)?.value).toBe('jdbc:${staging.DB_HOST}');
      expect(problems).toEqual([]);
      await context.close();
    });
  }
});
