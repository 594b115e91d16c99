/**
 * Multi-line values in the Add row, in chromium against the real server: a pasted PEM key keeps its line
 * breaks (the field grows into a text area instead of joining the lines), Shift+Enter starts a line, Enter then
 * adds a line and Ctrl+Enter or Add saves; a one-line value is added with Enter as before; after adding, the
 * field is one line again. Each value is checked against the server's own state.
 */
import { listVarsResponse } from '@svcenv/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

const PEM = [
  '-----BEGIN PRIVATE KEY-----',
  'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj',
  'MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu',
  '-----END PRIVATE KEY-----',
].join('\n');

describe.skipIf(!chromiumAvailable())('multi-line values in the Add row', () => {
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

  const serverVars = async (projectId: string) => {
    const res = await server.request('GET', `/v1/projects/${projectId}/envs/dev/vars?reveal=true`, {
      token: owner.jwt,
      schema: listVarsResponse,
    });
    return new Map(res.body.vars.map((v) => [v.key, v]));
  };
  /** A paste as the browser delivers it (the clipboard's text/plain), into the focused value field. */
  const paste = (page: Page, text: string) =>
    page.getByLabel('New value').evaluate((el, t) => {
      const data = new DataTransfer();
      data.setData('text/plain', t);
      el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    }, text);
  const tagOf = (page: Page) => page.getByLabel('New value').evaluate((el) => el.tagName.toLowerCase());

  for (const width of [1280, 390]) {
    it(`keeps a pasted PEM's lines, and Shift+Enter starts one (${width} px)`, async () => {
      const p = await createProject(server, owner.jwt, {
        name: `certs-${width}-${Date.now().toString(36)}`,
        envs: ['dev'],
      });
      const tab = await openTab(browser, server.url, width);
      await signIn(tab, server.url, owner.jwt);
      const { page, problems } = tab;
      await page.goto(`/projects/${p.id}?env=dev`);
      await page.getByLabel('New key').waitFor();
      expect(await tagOf(page)).toBe('input');

      // A pasted key with line breaks: the field becomes a text area holding every line, focused after them.
      await page.getByLabel('New key').fill('TLS_KEY');
      await page.getByLabel('New value').click();
      await paste(page, PEM.replaceAll('\n', '\r\n'));
      await expect.poll(() => tagOf(page)).toBe('textarea');
      expect(await page.getByLabel('New value').inputValue()).toBe(PEM);
      expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('New value');
      expect(await page.getByTestId('add-multiline-hint').textContent()).toContain('4 lines');
      if (width < 600) expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      await screenshot(page, `add-multiline-pem-${width}`);
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await expect.poll(async () => (await serverVars(p.id)).get('TLS_KEY')?.value).toBe(PEM);
      expect((await serverVars(p.id)).get('TLS_KEY')?.type).toBe('secret');
      // Added: the form is empty and one line again.
      await expect.poll(() => tagOf(page)).toBe('input');

      // Shift+Enter starts a line where the caret is; Enter then adds lines; Ctrl+Enter saves.
      await page.getByLabel('New key').fill('GREETING');
      await page.getByLabel('New value').click();
      await page.keyboard.type('line one');
      await page.keyboard.press('Shift+Enter');
      await expect.poll(() => tagOf(page)).toBe('textarea');
      await page.keyboard.type('line two');
      await page.keyboard.press('Enter');
      await page.keyboard.type('line three');
      expect(await page.getByLabel('New value').inputValue()).toBe('line one\nline two\nline three');
      await page.keyboard.press('Control+Enter');
      await expect
        .poll(async () => (await serverVars(p.id)).get('GREETING')?.value)
        .toBe('line one\nline two\nline three');
      // As a person would: the next key once the form has emptied itself and is one line again.
      await expect.poll(() => page.getByLabel('New key').inputValue()).toBe('');
      await expect.poll(() => tagOf(page)).toBe('input');

      // One line: Enter adds, as before.
      await page.getByLabel('New key').fill('PORT');
      await page.getByLabel('New value').fill('8080');
      await page.getByLabel('New value').press('Enter');
      await expect.poll(async () => (await serverVars(p.id)).get('PORT')?.value).toBe('8080');
      expect(await tagOf(page)).toBe('input');
      await screenshot(page, `add-multiline-after-${width}`);
      expect(problems).toEqual([]);
      await tab.context.close();
    });
  }
});
