/**
 * Getting the CLI from the dashboard (D39, D41), in chromium against the real server: the Tokens page and the
 * sidebar's "Get the CLI" page list the builds the server's manifest lists, each with a download that the
 * server answers and the one-line install for this server; without builds a note instead of dead links (the
 * downloads answer 404); the token dialog's commands name the project by its slug (D48, D58), never its id.
 */
import { cliReleaseManifest } from '@svcenv/contract';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

describe.skipIf(!chromiumAvailable())('getting the CLI', () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ env: { LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' } }),
      launch(),
    ]);
    owner = await signupUser(server, 'Olivia');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const manifest = async () => (await server.request('GET', '/v1/cli/latest', { schema: cliReleaseManifest })).body;

  for (const width of [1280, 390]) {
    it(`lists the server's builds with a working download and the one-line install (${width} px)`, async () => {
      const m = await manifest();
      // The test set-up builds the host's binary (cli/test/global-setup.ts).
      expect(m.assets.length).toBeGreaterThan(0);
      const tab = await openTab(browser, server.url, width);
      await signIn(tab, server.url, owner.jwt);
      const { page, problems } = tab;
      await page.goto('/tokens');
      const section = page.getByTestId('get-cli');
      await section.getByRole('list', { name: 'CLI downloads' }).waitFor();
      expect(await section.getByRole('listitem').count()).toBe(m.assets.length);
      for (const a of m.assets) {
        const item = section.getByTestId(`cli-${a.os}-${a.arch}`);
        expect(await item.locator('.cli-install').textContent()).toBe(
          `curl -fsSL ${server.url}/v1/cli/download/${a.os}/${a.arch} -o svcenv && chmod +x svcenv && sudo mv svcenv /usr/local/bin/`,
        );
        const href = await item.getByRole('link', { name: 'Download' }).getAttribute('href');
        expect(href).toBe(a.url);
        const head = await page.request.fetch(`${server.url}${href}`, { method: 'HEAD' });
        expect(head.status()).toBe(200);
      }
      expect(await section.textContent()).toContain(`svcenv login --api-url ${server.url} --token -`);
      if (width < 600) expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      await screenshot(page, `get-cli-tokens-${width}`);

      // The sidebar's "Get the CLI" (behind the menu on a phone).
      if (width < 600) await page.getByRole('button', { name: 'Menu' }).click();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Get the CLI' }).click();
      await page.getByRole('heading', { name: 'Get the CLI' }).waitFor();
      expect(page.url()).toBe(`${server.url}/cli`);
      await page.getByTestId('get-cli').getByRole('list', { name: 'CLI downloads' }).waitFor();
      expect(await page.getByTestId('get-cli').getByRole('listitem').count()).toBe(m.assets.length);
      await screenshot(page, `get-cli-page-${width}`);
      expect(problems).toEqual([]);
      await tab.context.close();
    });
  }

  it('says when the server has no builds, instead of links that answer 404', async () => {
    const none = await server.request('GET', '/v1/cli/download/darwin/riscv');
    expect(none.status).toBe(404);
    const tab = await openTab(browser, server.url, 1280);
    await signIn(tab, server.url, owner.jwt);
    const { page, problems } = tab;
    // A server built without binaries answers an empty manifest.
    await page.route('**/v1/cli/latest', (route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ version: '9.9.9', assets: [] }),
      }),
    );
    await page.goto('/cli');
    await page.getByTestId('cli-none').waitFor();
    expect(await page.getByTestId('cli-none').textContent()).toContain('npm run build:cli');
    expect(await page.getByRole('link', { name: 'Download' }).count()).toBe(0);
    await screenshot(page, 'get-cli-none-1280');
    expect(problems).toEqual([]);
    await tab.context.close();
  });

  it("the token dialog's setup line names the project by its slug, not its id", async () => {
    // A name of its own on each try, so that a retry does not meet the first try's project (409).
    const p = await createProject(server, owner.jwt, {
      name: `Billing API ${Math.random().toString(36).slice(2, 6)}`,
      envs: ['dev', 'prod'],
    });
    expect(p.slug).toMatch(/^billing-api-/);
    const tab = await openTab(browser, server.url, 1280);
    await signIn(tab, server.url, owner.jwt);
    const { page, problems } = tab;
    await page.goto('/tokens');
    await page.getByRole('button', { name: 'New token' }).first().click();
    const dlg = page.getByRole('dialog', { name: 'New access token' });
    await dlg.getByLabel('Name').fill('laptop');
    await dlg.getByLabel('Project').selectOption(p.id);
    await dlg.getByRole('button', { name: 'Create token' }).click();
    const snippet = page.getByTestId('cli-snippet');
    await snippet.waitFor();
    const text = (await snippet.locator('pre').textContent()) ?? '';
    expect(text).toContain(`svcenv setup --project ${p.slug} --env `);
    expect(text).toContain('svcenv pull');
    expect(text).not.toContain(p.id);
    // The builds arrive by their own request after the dialog opens: wait for them, do not race them.
    await snippet.getByText('Get the CLI (').waitFor();
    await screenshot(page, 'get-cli-token-dialog-1280');
    expect(problems).toEqual([]);
    await tab.context.close();
  });
});
