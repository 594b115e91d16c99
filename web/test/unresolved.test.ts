/**
 * D67 in the dashboard: adding a value whose reference does not resolve is refused with nothing saved; a
 * dialog says key by key what is wrong (with a guess among the environments the user can read) and offers
 * "Save anyway"; going back leaves the form with the refusal beside it. Debian's chromium against the real
 * server, at 1280 and 390 px.
 */
import { listVarsResponse } from '@svcenv/contract';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer, upsert } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

/* biome-ignore-start lint/suspicious/noTemplateCurlyInString: literal reference syntax */
describe.skipIf(!chromiumAvailable())('a reference that does not resolve, on save (D67)', () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let project: Awaited<ReturnType<typeof createProject>>;

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ env: { LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' } }),
      launch(),
    ]);
    owner = await signupUser(server, 'Owner');
    project = await createProject(server, owner.jwt, { name: 'Checkout', envs: ['dev', 'staging', 'prod'] });
    await upsert(server, owner.jwt, project.id, ['prod'], [{ key: 'DB_HOST', value: 'db.internal', type: 'plain' }]);
    await upsert(server, owner.jwt, project.id, ['dev'], [{ key: 'LOCAL', value: 'here', type: 'plain' }]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const devKeys = async () =>
    (
      await server.request('GET', `/v1/projects/${project.id}/envs/dev/vars`, {
        token: owner.jwt,
        schema: listVarsResponse,
      })
    ).body.vars.map((v) => v.key);

  for (const width of [1280, 390]) {
    it(`adding OOPS=\${prdo.DB_HOST} explains the typo, saves nothing, and "Save anyway" saves (${width} px)`, async () => {
      const tab = await openTab(browser, server.url, width);
      await signIn(tab, server.url, owner.jwt);
      const { page, context, problems } = tab;
      await page.goto(`/projects/${project.id}?env=dev`);
      await page.getByTestId('value-LOCAL').waitFor();
      const key = `OOPS_${width}`;
      await page.getByLabel('New key').fill(key);
      await page.getByLabel('New value').fill('${prdo.DB_HOST}');
      await page.getByLabel('Type', { exact: true }).selectOption('plain');
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      const list = page.getByTestId('unresolved-list');
      await list.waitFor();
      const said = await list.innerText();
      expect(said).toContain(key);
      // Words, not the code (lib/error-words.ts); the code stays in data-code.
      expect(said).toContain('Reference not readable');
      expect(said).not.toContain('REFERENCE_FORBIDDEN');
      expect(said).toContain('the environment prdo does not exist or you cannot read it; did you mean prod?');
      expect(said).toContain('Pulls of this environment would fail until it is fixed.');
      expect(await devKeys()).not.toContain(key);
      await screenshot(page, `unresolved-refusal-${width}`);
      // Back to the form: the refusal stays beside it, still nothing saved.
      await page.getByRole('button', { name: 'Back to editing' }).click();
      await expect.poll(() => page.getByRole('alert').first().innerText()).toContain('did you mean `prod`?');
      expect(await devKeys()).not.toContain(key);
      // Again, and this time saved as it is.
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await page.getByTestId('save-anyway').click();
      await expect.poll(devKeys).toContain(key);
      await page.getByTestId(`value-${key}`).waitFor();
      expect(problems).toEqual([]);
      await context.close();
    });
  }
});
/* biome-ignore-end lint/suspicious/noTemplateCurlyInString: literal reference syntax */
