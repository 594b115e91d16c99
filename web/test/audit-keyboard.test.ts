/**
 * in chromium against the real server: the audit log names actors and actions in
 * words, filters on the server (action, actor, dates) and exports the filtered log (ADR 0015); a variable's
 * history names who made each version and masks secrets until revealed (audited); the environment tabs move
 * with the arrow keys (one tab stop), focus stays inside a dialog and returns to its opener after Escape or
 * close; the tokens, team and audit pages fit a 390 px screen (no sideways page scroll).
 */
import { readFileSync } from 'node:fs';
import { auditPage, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
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

describe.skipIf(!chromiumAvailable())('audit log, history, keyboard and small screens', () => {
  let server: ServerProcess;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let dev: { id: string; jwt: string };
  let projectId: string;
  let tokenName: string;

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ env: { LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' } }),
      launch(),
    ]);
    owner = await signupUser(server, 'Olivia');
    const session = await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    const p = await createProject(server, owner.jwt, { name: 'shop', envs: ['dev', 'staging', 'prod'] });
    projectId = p.id;
    // Dana: a workspace member and project Developer who writes to dev.
    const d = await signupUser(server, 'Dana');
    expect(
      (
        await server.request('POST', '/v1/workspace/invites', {
          token: owner.jwt,
          body: { email: d.email, wsRole: 'Member' },
        })
      ).status,
    ).toBe(200);
    const sw = await server.request('POST', '/v1/auth/switch-workspace', {
      token: d.jwt,
      body: { workspaceId: session.body.user.workspaceId },
      schema: switchWorkspaceResponse,
    });
    dev = { id: d.user.id, jwt: sw.body.token };
    expect(
      (
        await server.request('PUT', `/v1/projects/${projectId}/members/${dev.id}`, {
          token: owner.jwt,
          body: { role: 'Developer' },
        })
      ).status,
    ).toBe(200);
    await upsert(
      server,
      owner.jwt,
      projectId,
      ['dev'],
      [{ key: 'DB_PASSWORD', value: 'first-secret', type: 'secret' }],
    );
    await upsert(server, dev.jwt, projectId, ['dev'], [{ key: 'DB_PASSWORD', value: 'second-secret', type: 'secret' }]);
    await upsert(
      server,
      dev.jwt,
      projectId,
      ['dev', 'staging'],
      [{ key: 'API_URL', value: 'https://x', type: 'plain' }],
    );
    const tok = await createToken(server, owner.jwt, { name: 'ci-deploy', scope: 'read' });
    tokenName = tok.name;
    expect((await server.request('GET', `/v1/projects/${projectId}/envs/dev/pull`, { token: tok.token })).status).toBe(
      200,
    );
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function signedIn(width = 1280) {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, owner.jwt);
    return tab;
  }
  /** The filtered log as the server has it. */
  async function serverLog(query: Record<string, string>) {
    const res = await server.request('GET', `/v1/workspace/audit?${new URLSearchParams({ limit: '200', ...query })}`, {
      token: owner.jwt,
      schema: auditPage,
    });
    expect(res.status).toBe(200);
    return res.body.logs;
  }
  const focused = (page: Page) =>
    page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return {
        text: el?.textContent?.trim() ?? '',
        label: el?.getAttribute('aria-label') ?? '',
        inDialog: !!el?.closest('dialog[open]'),
        role: el?.getAttribute('role') ?? '',
      };
    });

  it('shows actors by name and actions in words, filters on the server, and exports the filtered log', async () => {
    const { page, problems } = await signedIn();
    await page.goto('/audit');
    const rows = page.getByTestId('audit-row');
    await rows.first().waitFor();
    const actors = await page.getByTestId('audit-actor').allTextContents();
    expect(actors).toContain(`token:${tokenName}`);
    expect(actors).toContain('Dana');
    expect(actors).toContain('Olivia');
    expect(actors.join(' ')).not.toMatch(/[0-9a-f]{8}…/);
    await expect.poll(() => page.locator('.audit-table').textContent()).toContain('Pulled variables');
    await expect.poll(() => page.locator('.audit-table').textContent()).toContain('Saved variables');

    // The action filter is sent to the server: every row is that action, as many as the server has.
    const req = page.waitForRequest((r) => r.url().includes('/v1/workspace/audit') && r.url().includes('action='));
    await page.getByLabel('Filter by action').selectOption({ label: 'Saved variables' });
    expect(new URL((await req).url()).searchParams.get('action')).toBe('vars.bulk_upsert');
    const upserts = await serverLog({ action: 'vars.bulk_upsert' });
    await expect.poll(() => rows.count()).toBe(upserts.length);
    // And the actor filter narrows it further, on the server.
    await page.getByLabel('Filter by actor').selectOption({ label: 'Dana' });
    const byDana = await serverLog({ action: 'vars.bulk_upsert', actor: dev.id });
    // Two saves, one of them to two environments: one entry per environment.
    expect(byDana.length).toBe(3);
    expect(byDana.length).toBeLessThan(upserts.length);
    await expect.poll(() => rows.count()).toBe(3);
    expect(await page.getByTestId('audit-actor').allTextContents()).toEqual(['Dana', 'Dana', 'Dana']);

    // Export: the file holds exactly the filtered entries.
    const csvDownload = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const csv = readFileSync((await (await csvDownload).path())!, 'utf8');
    const lines = csv.trim().split('\r\n');
    expect(lines[0]).toBe(
      'time,action,action_words,actor_type,actor_id,actor_name,project_id,project,project_slug,environment,key,detail',
    );
    expect(lines.length).toBe(4);
    expect(
      lines.slice(1).every((l) => l.includes(',vars.bulk_upsert,Saved variables,user,') && l.includes(',Dana,')),
    ).toBe(true);
    const jsonDownload = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export JSON' }).click();
    const json = JSON.parse(readFileSync((await (await jsonDownload).path())!, 'utf8'));
    expect(json.map((e: { id: number }) => e.id)).toEqual(byDana.map((e) => e.id));

    // A date range with nothing in it (tomorrow on) is an empty list from the server, not a filter of loaded rows.
    const tomorrow = new Date(Date.now() + 86_400_000);
    const day = `${tomorrow.getFullYear()}-${String(tomorrow.getMonth() + 1).padStart(2, '0')}-${String(tomorrow.getDate()).padStart(2, '0')}`;
    const dated = page.waitForRequest((r) => r.url().includes('/v1/workspace/audit') && r.url().includes('from='));
    await page.getByLabel('From date').fill(day);
    const from = new URL((await dated).url()).searchParams.get('from')!;
    expect(Date.parse(from)).toBe(new Date(tomorrow.getFullYear(), tomorrow.getMonth(), tomorrow.getDate()).getTime());
    await page.getByText('Nothing matches these filters.').waitFor();
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => rows.count()).toBeGreaterThan(5);
    await screenshot(page, 'audit-1280');
    expect(problems).toEqual([]);
  });

  it("names who made each version in a key's history and masks secrets until revealed, which is audited", async () => {
    const { page, problems } = await signedIn();
    await page.goto(`/projects/${projectId}?env=dev`);
    await page.getByRole('button', { name: 'History of DB_PASSWORD' }).click();
    const dlg = page.getByRole('dialog', { name: 'History of DB_PASSWORD' });
    await dlg.getByTestId('history-entry').first().waitFor();
    await expect.poll(() => dlg.getByTestId('history-by').allTextContents()).toEqual(['by Dana', 'by Olivia']);
    expect(await dlg.textContent()).not.toContain('second-secret');
    const revealsBefore = (await serverLog({ action: 'var.reveal' })).length;
    await dlg.getByRole('button', { name: 'Reveal values' }).click();
    await expect
      .poll(() => dlg.locator('.timeline-value').allTextContents())
      .toEqual(['second-secret', 'first-secret']);
    await expect.poll(async () => (await serverLog({ action: 'var.reveal' })).length).toBe(revealsBefore + 1);
    await screenshot(page, 'history-1280');
    expect(problems).toEqual([]);
  });

  it('moves between environment tabs with the arrow keys, one tab stop for the list', async () => {
    const { page, problems } = await signedIn();
    await page.goto(`/projects/${projectId}?env=dev`);
    const tab = (name: string) => page.getByRole('tab', { name, exact: false }).filter({ hasText: name });
    await tab('dev').waitFor();
    // Only the selected tab is a tab stop.
    expect(
      await page
        .locator('[role=tablist][aria-label=Environments] [role=tab]')
        .evaluateAll((t) => t.map((x) => (x as HTMLElement).tabIndex)),
    ).toEqual([0, -1, -1]);
    await tab('dev').focus();
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => focused(page)).toMatchObject({ text: 'staging', role: 'tab' });
    await expect.poll(() => tab('staging').getAttribute('aria-selected')).toBe('true');
    await expect.poll(() => new URL(page.url()).searchParams.get('env')).toBe('staging');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight'); // past prod: wraps to dev
    await expect.poll(() => focused(page)).toMatchObject({ text: 'dev', role: 'tab' });
    await page.keyboard.press('ArrowLeft'); // wraps back to the last
    await expect.poll(() => focused(page)).toMatchObject({ text: expect.stringContaining('prod'), role: 'tab' });
    await page.keyboard.press('Home');
    await expect.poll(() => focused(page)).toMatchObject({ text: 'dev' });
    await page.keyboard.press('End');
    await expect.poll(() => tab('prod').getAttribute('aria-selected')).toBe('true');
    // Tab leaves the list rather than walking through the other tabs.
    await page.keyboard.press('Tab');
    expect((await focused(page)).role).not.toBe('tab');
    expect(problems).toEqual([]);
  });

  it('keeps focus inside a dialog and returns it to the opener after Escape or Cancel', async () => {
    const { page, problems } = await signedIn();
    await page.goto('/tokens');
    const opener = page.getByRole('button', { name: 'New token' });
    await opener.focus();
    await page.keyboard.press('Enter');
    const dlg = page.getByRole('dialog', { name: 'New access token' });
    await dlg.waitFor();
    await expect.poll(() => focused(page)).toMatchObject({ inDialog: true });
    // Tab around more times than the dialog has controls: focus never leaves it, and it comes round again.
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press('Tab');
      const f = await focused(page);
      expect(f.inDialog, `Tab ${i + 1} left the dialog for ${JSON.stringify(f)}`).toBe(true);
      seen.add(`${f.label}|${f.text}`);
    }
    expect(seen.size).toBeGreaterThan(3);
    for (let i = 0; i < 30; i++) {
      await page.keyboard.press('Shift+Tab');
      expect((await focused(page)).inDialog).toBe(true);
    }
    await page.keyboard.press('Escape');
    await dlg.waitFor({ state: 'detached' });
    await expect.poll(() => focused(page)).toMatchObject({ text: 'New token' });

    // A ModalForm: the cursor starts in its first field; Cancel returns focus to the opener too.
    await page.goto(`/projects/${projectId}`);
    const edit = page.getByRole('button', { name: 'Edit project' });
    await edit.click();
    const form = page.getByRole('dialog', { name: 'Edit project' });
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe('INPUT');
    await form.getByRole('button', { name: 'Cancel' }).click();
    await form.waitFor({ state: 'detached' });
    await expect.poll(() => focused(page)).toMatchObject({ text: 'Edit project' });
    expect(problems).toEqual([]);
  });

  it('fits the tokens, team and audit pages to a 390 px screen: no sideways page scroll, tables as cards', async () => {
    const { page, problems } = await signedIn(390);
    const pages: [string, string, string][] = [
      ['/tokens', 'tokens-390', 'ci-deploy'],
      ['/team', 'team-390', 'Dana'],
      ['/audit', 'audit-390', `token:${tokenName}`],
      [`/projects/${projectId}?tab=audit`, 'project-audit-390', 'Dana'],
    ];
    for (const [url, shot, text] of pages) {
      await page.goto(url);
      await page.locator('td', { hasText: text }).first().waitFor();
      const size = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        width: window.innerWidth,
        head: getComputedStyle(document.querySelector('.table-cards thead')!).display,
      }));
      expect(size, url).toEqual({ scroll: 390, width: 390, head: 'none' });
      await screenshot(page, shot);
    }
    // The same pages at 1280 keep their tables.
    const wide = await signedIn(1280);
    await wide.page.goto('/tokens');
    await wide.page.getByText('ci-deploy').first().waitFor();
    expect(
      await wide.page.evaluate(() => getComputedStyle(document.querySelector('.table-cards thead')!).display),
    ).toBe('table-header-group');
    await screenshot(wide.page, 'tokens-1280');
    await wide.page.goto('/team');
    await wide.page.getByText('Dana').first().waitFor();
    await screenshot(wide.page, 'team-1280');
    expect(problems).toEqual([]);
  });
});
