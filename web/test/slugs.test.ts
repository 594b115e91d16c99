/**
 * Project slugs in the dashboard (D48), in chromium against the real server: the slug on the projects list
 * and the project page; an Admin edits it (409 duplicate and 400 invalid shown on the field); the token
 * dialog's CLI snippet names this server's --api-url and the project's slug, and links the CLI downloads the
 * server lists. Screenshots at 1280 and 390 px go to test-artifacts/.
 */
import { cliReleaseManifest, project as projectSchema } from '@svcenv/contract';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

describe.skipIf(!chromiumAvailable())('project slugs in the dashboard (D48)', () => {
  let server: ServerProcess;
  let browser: Browser;
  let jwt: string;
  let projectId: string;

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer({ env: { LOG_LEVEL: 'warn' } }), launch()]);
    jwt = (await signupUser(server, 'Ada')).jwt;
    projectId = (await createProject(server, jwt, { name: 'Shop API', envs: ['dev', 'prod'] })).id;
    await createProject(server, jwt, { name: 'Billing' });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function signedIn(width = 1280) {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, jwt);
    return tab;
  }
  const slugOf = async () =>
    (await server.request('GET', `/v1/projects/${projectId}`, { token: jwt, schema: projectSchema })).body.slug;

  it('shows the slug in the projects list and on the project page (390 px)', async () => {
    const { page, context, problems } = await signedIn(390);
    await page.goto('/projects');
    await page.getByTestId(`slug-${projectId}`).getByText('shop-api', { exact: true }).waitFor();
    await screenshot(page, 'slugs-projects-390');
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    await page.goto(`/projects/${projectId}`);
    await page.getByTestId('project-slug').getByText('shop-api', { exact: true }).waitFor();
    await screenshot(page, 'slugs-project-390');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('an Admin edits the slug; a duplicate and an invalid one are refused on the field', async () => {
    const { page, context, problems } = await signedIn();
    await page.goto(`/projects/${projectId}`);
    await page.getByRole('button', { name: 'Edit project' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit project' });
    const field = dialog.getByLabel('Slug');
    expect(await field.inputValue()).toBe('shop-api');

    await field.fill('billing');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.locator('.field-invalid').getByText('another project of this workspace has this slug').waitFor();
    await field.fill('Shop API');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog
      .locator('.field-invalid .field-error')
      .getByText(/lower-case letters/)
      .waitFor();
    await screenshot(page, 'slugs-edit-invalid-1280');
    expect(await slugOf()).toBe('shop-api');

    await field.fill('shop-backend');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Project saved').waitFor();
    await page.getByTestId('project-slug').getByText('shop-backend', { exact: true }).waitFor();
    expect(await slugOf()).toBe('shop-backend');
    await screenshot(page, 'slugs-project-1280');
    expect(problems).toEqual([]);
    await context.close();
  });

  for (const width of [1280, 390]) {
    it(`the token dialog's CLI snippet names --api-url and the project's slug, and links the downloads (${width} px)`, async () => {
      const { page, context, problems } = await signedIn(width);
      await page.goto('/tokens');
      await page.getByRole('button', { name: 'New token' }).click();
      const form = page.getByRole('dialog', { name: 'New access token' });
      await form.getByLabel('Name').fill(`ci-${width}`);
      await form.getByLabel('Project').selectOption(projectId);
      await form.getByRole('button', { name: 'Create token' }).click();
      const snippet = page.getByTestId('cli-snippet');
      await snippet.waitFor();
      const text = (await snippet.locator('pre').textContent()) ?? '';
      expect(text).toContain(`svcenv login --api-url ${server.url} --token -`);
      // D58: setup writes .svcenv.json with the slug, so pull needs no flags.
      expect(text).toMatch(/svcenv setup --project (shop-api|shop-backend) --env dev\nsvcenv pull/);
      expect(text).not.toContain(projectId);
      // The downloads are exactly what the server lists at /v1/cli/latest.
      const latest = await server.request('GET', '/v1/cli/latest', { schema: cliReleaseManifest });
      const links = await snippet.locator('a[download]').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
      expect(links).toEqual(latest.body.assets.map((a) => a.url));
      if (latest.body.assets.length === 0) await snippet.getByText('no CLI builds to download').waitFor();
      await screenshot(page, `slugs-token-snippet-${width}`);
      if (width < 600) {
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
      }
      expect(problems).toEqual([]);
      await context.close();
    });
  }
});
