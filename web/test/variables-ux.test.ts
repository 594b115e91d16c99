/**
 * The variables screen never damages data silently and never leaves a person at a dead end: "Add" on an existing key asks (edit it or overwrite it), making a secret plain asks,
 * import keeps existing types and leaves out the context keys, a delete can be undone and deleted keys are
 * listed with restore, references to missing keys and unresolvable values are marked, and 230 variables are
 * a paged, sortable, filterable list with a sticky header, a sticky selection bar and copy buttons.
 * Debian's chromium against the real server; each check is made against the server's own state.
 */
import { listVarsResponse, project as projectSchema, type variable } from '@svcenv/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { createProject, type ServerProcess, signupUser, startServer, upsert } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

type Var = z.infer<typeof variable>;

describe.skipIf(!chromiumAvailable())('the variables screen keeps data safe and people moving', () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ env: { LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' } }),
      launch(),
    ]);
    owner = await signupUser(server, 'Owner');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** The environment as the server holds it (plaintext). */
  async function serverVars(projectId: string, env: string): Promise<Map<string, Var>> {
    const res = await server.request('GET', `/v1/projects/${projectId}/envs/${env}/vars?reveal=true`, {
      token: owner.jwt,
      schema: listVarsResponse,
    });
    expect(res.status).toBe(200);
    return new Map(res.body.vars.map((v) => [v.key, v]));
  }

  async function signedIn(width: number) {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, owner.jwt);
    await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    return tab;
  }

  const clipboard = (page: Page) => page.evaluate(() => navigator.clipboard.readText());

  for (const width of [1280, 390]) {
    it(`"Add" on an existing key asks; a secret becomes plain only when confirmed; references are checked (${width} px)`, async () => {
      const p = await createProject(server, owner.jwt, { name: `add-${width}`, envs: ['dev'] });
      await upsert(
        server,
        owner.jwt,
        p.id,
        ['dev'],
        [
          { key: 'DB_PASSWORD', value: 'old-secret', type: 'secret' },
          { key: 'API_URL', value: 'https://old.example', type: 'plain' },
          { key: 'DATABASE_URL', value: 'postgres://${DB_HOST}/app', type: 'plain' },
          { key: 'WITH_FALLBACK', value: '${REGION:-eu-west-1}', type: 'plain' },
          { key: 'LOOP_A', value: '${LOOP_B}', type: 'plain' },
          { key: 'LOOP_B', value: '${LOOP_A}', type: 'plain' },
        ],
      );
      const { page, context, problems } = await signedIn(width);
      await page.goto(`/projects/${p.id}?env=dev`);
      await page.getByTestId('value-DB_PASSWORD').waitFor();

      // A reference to a key that does not exist is marked; so are a fallback and a cycle.
      await expect
        .poll(() => page.getByTestId('missing-DATABASE_URL').textContent())
        .toContain('DB_HOST is not defined in this environment; resolves to empty');
      await expect
        .poll(() => page.getByTestId('missing-WITH_FALLBACK').textContent())
        .toContain('its fallback is used');
      await expect.poll(() => page.getByTestId('problem-LOOP_A').textContent()).toContain('Cannot resolve');
      expect(await page.getByTestId('missing-API_URL').count()).toBe(0);

      // Adding DB_PASSWORD again does not overwrite it: the form says it exists.
      await page.getByLabel('New key').fill('DB_PASSWORD');
      await page.getByLabel('New value').fill('new-secret');
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await expect
        .poll(() => page.getByTestId('add-conflict').textContent())
        .toContain('DB_PASSWORD already exists in dev');
      expect((await serverVars(p.id, 'dev')).get('DB_PASSWORD')?.value).toBe('old-secret');
      if (width === 1280) await screenshot(page, 'vars-add-conflict-1280');
      else await screenshot(page, 'vars-add-conflict-390');
      // "Edit" opens that variable's editor with the typed value; saving keeps its type.
      await page.getByTestId('add-conflict').getByRole('button', { name: 'Edit DB_PASSWORD' }).click();
      await expect.poll(() => page.getByLabel('Value of DB_PASSWORD').inputValue()).toBe('new-secret');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await expect.poll(async () => (await serverVars(p.id, 'dev')).get('DB_PASSWORD')?.value).toBe('new-secret');
      expect((await serverVars(p.id, 'dev')).get('DB_PASSWORD')?.type).toBe('secret');

      // Overwriting is an explicit second step.
      await page.getByLabel('New key').fill('API_URL');
      await page.getByLabel('New value').fill('https://new.example');
      await page.getByLabel('Type', { exact: true }).selectOption('plain');
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await page.getByTestId('add-conflict').waitFor();
      expect((await serverVars(p.id, 'dev')).get('API_URL')?.value).toBe('https://old.example');
      await page.getByRole('button', { name: 'Overwrite' }).click();
      await expect.poll(async () => (await serverVars(p.id, 'dev')).get('API_URL')?.value).toBe('https://new.example');

      // One click on the badge no longer exposes a secret: it asks, and Cancel changes nothing.
      await page.getByRole('button', { name: 'Type secret; switch to plain' }).click();
      const confirm = page.getByRole('dialog', { name: 'Make DB_PASSWORD plain?' });
      await confirm.getByText('shown unmasked').waitFor();
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      expect((await serverVars(p.id, 'dev')).get('DB_PASSWORD')?.type).toBe('secret');
      await page.getByRole('button', { name: 'Type secret; switch to plain' }).click();
      await page
        .getByRole('dialog', { name: 'Make DB_PASSWORD plain?' })
        .getByRole('button', { name: 'Make plain' })
        .click();
      await expect.poll(async () => (await serverVars(p.id, 'dev')).get('DB_PASSWORD')?.type).toBe('plain');
      // Plain to secret is safe and stays one click.
      await page.getByRole('button', { name: 'Type plain; switch to secret' }).first().click();
      await expect
        .poll(async () => [...(await serverVars(p.id, 'dev')).values()].filter((v) => v.type === 'secret').length)
        .toBe(1);
      expect(problems).toEqual([]);
      await context.close();
    });
  }

  it('a delete can be undone from its toast, and deleted keys are listed with restore (1280 and 390 px)', async () => {
    const p = await createProject(server, owner.jwt, { name: 'deletes', envs: ['dev'] });
    await upsert(
      server,
      owner.jwt,
      p.id,
      ['dev'],
      [
        { key: 'KEEP', value: 'k', type: 'plain' },
        { key: 'UNDO_ME', value: 'undo-value', type: 'secret' },
        { key: 'GONE_A', value: 'gone-a', type: 'plain' },
        { key: 'GONE_B', value: 'gone-b', type: 'secret' },
        { key: 'BACK', value: 'back-1', type: 'plain' },
      ],
    );
    // Deleted elsewhere (CLI, API): GONE_A, GONE_B; BACK deleted and re-created (not deleted now).
    const del = async (key: string) =>
      expect(
        (await server.request('DELETE', `/v1/projects/${p.id}/envs/dev/vars/${key}`, { token: owner.jwt })).status,
      ).toBe(204);
    await del('GONE_A');
    await del('GONE_B');
    await del('BACK');
    await upsert(server, owner.jwt, p.id, ['dev'], [{ key: 'BACK', value: 'back-2', type: 'plain' }]);

    const { page, context, problems } = await signedIn(1280);
    await page.goto(`/projects/${p.id}?env=dev`);
    await page.getByTestId('value-UNDO_ME').waitFor();
    await page.getByRole('button', { name: 'Delete UNDO_ME' }).click();
    await page.getByRole('dialog', { name: 'Delete UNDO_ME?' }).getByRole('button', { name: 'Delete' }).click();
    await expect.poll(async () => (await serverVars(p.id, 'dev')).has('UNDO_ME')).toBe(false);
    await page.getByRole('button', { name: 'Undo', exact: true }).click();
    await expect.poll(async () => (await serverVars(p.id, 'dev')).get('UNDO_ME')?.value).toBe('undo-value');
    await page.getByTestId('value-UNDO_ME').waitFor();

    await page.getByRole('button', { name: 'Deleted keys' }).click();
    const dlg = page.getByRole('dialog', { name: 'Deleted keys in dev' });
    const list = dlg.getByRole('list', { name: 'Deleted keys' });
    await list.getByText('GONE_A').waitFor();
    await expect.poll(() => list.locator('li').count()).toBe(2);
    expect(await list.textContent()).not.toContain('BACK');
    expect(await list.textContent()).not.toContain('UNDO_ME');
    await dlg.getByText('gone-a').waitFor();
    await screenshot(page, 'vars-deleted-keys-1280');
    await dlg.getByRole('button', { name: 'Restore GONE_B' }).click();
    await expect
      .poll(async () => (await serverVars(p.id, 'dev')).get('GONE_B'))
      .toMatchObject({ value: 'gone-b', type: 'secret' });
    await expect.poll(() => list.locator('li').count()).toBe(1);
    await dlg.getByRole('button', { name: 'Close' }).click();
    await page.getByTestId('value-GONE_B').waitFor();
    expect(problems).toEqual([]);
    await context.close();

    const phone = await signedIn(390);
    await phone.page.goto(`/projects/${p.id}?env=dev`);
    await phone.page.getByRole('button', { name: 'Deleted keys' }).click();
    await phone.page.getByRole('dialog', { name: 'Deleted keys in dev' }).getByText('GONE_A').waitFor();
    await screenshot(phone.page, 'vars-deleted-keys-390');
    await phone.context.close();
  });

  it('import keeps existing types unless asked, counts each key once per environment, leaves out context keys', async () => {
    const p = await createProject(server, owner.jwt, { name: 'imports', envs: ['dev', 'staging'] });
    await upsert(server, owner.jwt, p.id, ['dev'], [{ key: 'PUBLIC_HOST', value: 'old.example', type: 'plain' }]);
    for (const width of [390, 1280]) {
      const { page, context, problems } = await signedIn(width);
      await page.goto(`/projects/${p.id}?env=dev`);
      await page.getByTestId('value-PUBLIC_HOST').waitFor();
      await page.getByRole('button', { name: 'Import .env' }).click();
      const imp = page.getByRole('dialog', { name: 'Import variables' });
      // A file pulled from svcenv carries the context keys (D28a): they are left out, with a note.
      await imp
        .getByLabel('Paste a .env file')
        .fill(
          `PUBLIC_HOST=new-${width}.example\nAPI_TOKEN=t-${width}\nSVCENV_PROJECT=${p.id}\nSVCENV_ENV=dev\nSVCENV_PROJECT_NAME=imports\n`,
        );
      await imp.getByRole('checkbox', { name: 'staging' }).check();
      await expect
        .poll(() => imp.getByTestId('import-skipped').textContent())
        .toContain('SVCENV_PROJECT, SVCENV_ENV, SVCENV_PROJECT_NAME');
      const preview = imp.getByLabel('Preview');
      await expect.poll(() => preview.textContent()).toContain('Preview: 2 variables');
      expect(await preview.textContent()).not.toContain('SVCENV_');
      // Each key has its own type, guessed from its name: API_TOKEN secret, PUBLIC_HOST plain.
      await expect.poll(() => imp.getByLabel('Type of API_TOKEN').inputValue()).toBe('secret');
      expect(await imp.getByLabel('Type of PUBLIC_HOST').inputValue()).toBe('plain');
      // Existing keys keep their type unless the box is ticked; ticked, the preview names each key that changes.
      await imp.getByLabel('Type of PUBLIC_HOST').selectOption('secret');
      expect(await preview.textContent()).not.toContain('becomes secret');
      await imp.getByRole('checkbox', { name: 'Also give existing keys the types chosen below' }).check();
      await expect.poll(() => preview.textContent()).toContain('1 existing key becomes secret: PUBLIC_HOST');
      await imp.getByRole('checkbox', { name: 'Also give existing keys the types chosen below' }).uncheck();
      expect(await preview.textContent()).not.toContain('becomes secret');
      await screenshot(page, `vars-import-preview-${width}`);
      await imp.getByRole('button', { name: 'Save 2 variables' }).click();
      const first = width === 390;
      await expect
        .poll(() => imp.getByTestId('import-result-dev').textContent())
        .toContain(first ? 'Saved into dev: 1 created, 1 updated.' : 'Saved into dev: 0 created, 2 updated.');
      await expect
        .poll(() => imp.getByTestId('import-result-staging').textContent())
        .toContain(first ? 'Saved into staging: 2 created, 0 updated.' : 'Saved into staging: 0 created, 2 updated.');
      await imp.getByRole('button', { name: 'Done' }).click();
      const dev = await serverVars(p.id, 'dev');
      // The existing plain key stays plain; where it is new it takes the type chosen for it (secret).
      expect(dev.get('PUBLIC_HOST')).toMatchObject({ value: `new-${width}.example`, type: 'plain' });
      expect(dev.get('API_TOKEN')).toMatchObject({ value: `t-${width}`, type: 'secret' });
      expect([...dev.keys()].filter((k) => k.startsWith('SVCENV_'))).toEqual([]);
      const staging = await serverVars(p.id, 'staging');
      expect(staging.get('PUBLIC_HOST')?.type).toBe('secret');
      expect(problems).toEqual([]);
      await context.close();
    }
  });

  it('230 variables: paged, counted, sorted, filtered by type, key and visible value, sticky header and bar, copy', async () => {
    const p = await createProject(server, owner.jwt, { name: 'big', envs: ['dev'] });
    const items = Array.from({ length: 230 }, (_, i) => {
      const n = String(i).padStart(3, '0');
      return i % 2
        ? { key: `VAR_${n}`, value: `plain-value-${n}`, type: 'plain' }
        : { key: `VAR_${n}`, value: `hidden-${n}`, type: 'secret' };
    });
    await upsert(server, owner.jwt, p.id, ['dev'], items);
    // Touched last: first under "Recently updated".
    const put = await server.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/VAR_100`, {
      token: owner.jwt,
      body: { value: 'hidden-100b' },
    });
    expect(put.status).toBe(200);
    const seen = await server.request('GET', `/v1/projects/${p.id}`, { token: owner.jwt, schema: projectSchema });
    expect(seen.body.access.envs.dev).toBe('write');

    const { page, context, problems } = await signedIn(1280);
    await page.goto(`/projects/${p.id}?env=dev`);
    await page.getByTestId('value-VAR_000').waitFor();
    const rows = page.locator('.vars-table tbody tr');
    await expect.poll(() => page.getByTestId('var-count').textContent()).toBe('230 variables');
    expect(await rows.count()).toBe(50);
    expect(await page.getByTestId('page-of').textContent()).toBe('Page 1 of 5');
    // The page scrolls, not a box inside it, and the header stays in view under the top bar.
    expect(await page.locator('.vars-scroll').evaluate((el) => el.scrollHeight - el.clientHeight)).toBe(0);
    await page.evaluate(() => scrollBy(0, 1200));
    const headTop = await page
      .locator('.vars-table thead th')
      .nth(1)
      .evaluate((el) => el.getBoundingClientRect().top);
    expect(Math.abs(headTop - 56)).toBeLessThan(3);
    await page.evaluate(() => scrollTo(0, 0));

    await page.getByRole('button', { name: 'Next ›' }).click();
    await page.getByTestId('value-VAR_050').waitFor();
    expect(await page.getByTestId('value-VAR_000').count()).toBe(0);

    // Sort: key Z–A starts with the last key; recently updated with the one just changed.
    await page.getByLabel('Sort by').selectOption('key-desc');
    await page.getByRole('button', { name: '‹ Previous' }).click();
    await expect.poll(() => rows.first().locator('.var-key').textContent()).toBe('VAR_229');
    await page.getByLabel('Sort by').selectOption('updated');
    await expect.poll(() => rows.first().locator('.var-key').textContent()).toBe('VAR_100');
    await page.getByLabel('Sort by').selectOption('key');

    // Type filter and count.
    await page.getByLabel('Show types').selectOption('plain');
    await expect.poll(() => page.getByTestId('var-count').textContent()).toBe('115 of 230');
    await page.getByLabel('Show types').selectOption('all');

    // Filter by key, then by a plain value; a masked secret's value is not searched until revealed.
    const filter = page.getByLabel('Filter by key or value');
    await filter.fill('VAR_01');
    await expect.poll(() => page.getByTestId('var-count').textContent()).toBe('10 of 230');
    await filter.fill('plain-value-12');
    await expect.poll(() => page.getByTestId('var-count').textContent()).toBe('5 of 230');
    await filter.fill('hidden-04');
    await page.getByRole('heading', { name: 'No variables match' }).waitFor();
    await page.getByText('Masked secret values are not searched').waitFor();
    await screenshot(page, 'vars-no-match-1280');
    await page.getByRole('button', { name: 'Reveal all' }).click();
    await expect.poll(() => page.getByTestId('var-count').textContent()).toBe('5 of 230');
    await page.getByRole('button', { name: 'Hide values' }).click();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => page.getByTestId('var-count').textContent()).toBe('230 variables');

    // Copy a plain value directly; a masked secret asks to be revealed first.
    await page.getByRole('button', { name: 'Copy VAR_001' }).click();
    await expect.poll(() => clipboard(page)).toBe('plain-value-001');
    await page.getByRole('button', { name: 'Copy VAR_002' }).click();
    const ask = page.getByRole('dialog', { name: 'Reveal VAR_002 to copy it?' });
    await ask.getByRole('button', { name: 'Reveal and copy' }).click();
    await expect.poll(() => clipboard(page)).toBe('hidden-002');
    await expect.poll(() => page.getByTestId('value-VAR_002').textContent()).toBe('hidden-002');

    // "Select all" takes every matching row; the selection bar stays in view while the page scrolls.
    await page.getByRole('checkbox', { name: 'Select all' }).check();
    await expect.poll(() => page.getByLabel('Selection').textContent()).toContain('230 selected');
    await page.evaluate(() => scrollTo(0, document.documentElement.scrollHeight));
    const bar = await page.getByLabel('Selection').boundingBox();
    expect(bar && bar.y >= 0 && bar.y < 200).toBe(true);
    await page.evaluate(() => scrollTo(0, 0));
    await screenshot(page, 'vars-long-list-1280');
    expect(problems).toEqual([]);
    await context.close();

    const phone = await signedIn(390);
    await phone.page.goto(`/projects/${p.id}?env=dev`);
    await expect.poll(() => phone.page.getByTestId('var-count').textContent()).toBe('230 variables');
    expect(await phone.page.locator('.vars-table tbody tr').count()).toBe(50);
    await screenshot(phone.page, 'vars-long-list-390');
    expect(phone.problems).toEqual([]);
    await phone.context.close();
  });
});
