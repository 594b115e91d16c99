/**
 * Change requests in the dashboard (D47, ADR 0013), in chromium against the real server: the Owner's approval
 * switch; a Developer's edits to an environment that requires approval become a pending change set, then one
 * change request (If-Match of the listing's revision: a change made meanwhile is a 412 that offers to review
 * again); the badges of open requests; the Owner approves it in another browser and sees it applied, rejects
 * with a reason, meets a conflict; the author withdraws. Screenshots at 1280 and 390 px go to test-artifacts/.
 */
import {
  changeRequest,
  changeRequestsResponse,
  environment,
  sessionResponse,
  switchWorkspaceResponse,
  variable,
} from '@svcenv/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProject, type ServerProcess, signupUser, startServer, upsert } from '../../server/test/harness.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

const varsList = z.object({ vars: z.array(variable) });
const envList = z.object({ envs: z.array(environment) });

describe.skipIf(!chromiumAvailable())('change requests in the dashboard (D47)', () => {
  let server: ServerProcess;
  let browser: Browser;
  let ownerJwt: string;
  let devJwt: string;
  let projectId: string;

  const plainVars = async (env = 'prod') =>
    Object.fromEntries(
      (
        await server.request('GET', `/v1/projects/${projectId}/envs/${env}/vars?reveal=true`, {
          token: ownerJwt,
          schema: varsList,
        })
      ).body.vars.map((v) => [v.key, v.value]),
    );
  const requests = async (status?: string) =>
    (
      await server.request(
        'GET',
        `/v1/projects/${projectId}/envs/prod/change-requests${status ? `?status=${status}` : ''}`,
        { token: ownerJwt, schema: changeRequestsResponse },
      )
    ).body.changeRequests;
  const openByDev = async (message: string, set: object[], del: string[] = []) =>
    (
      await server.request('POST', `/v1/projects/${projectId}/envs/prod/change-requests`, {
        token: devJwt,
        body: { message, set, delete: del },
        schema: changeRequest,
      })
    ).body;
  const ownerWrites = (key: string, value: string) =>
    upsert(server, ownerJwt, projectId, ['prod'], [{ key, value, type: 'plain' }]);

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer({ env: { LOG_LEVEL: 'warn' } }), launch()]);
    const owner = await signupUser(server, 'Olga');
    ownerJwt = owner.jwt;
    const session = await server.request('GET', '/v1/auth/session', { token: ownerJwt, schema: sessionResponse });
    projectId = (await createProject(server, ownerJwt, { name: 'shop', envs: ['dev', 'prod'] })).id;
    await upsert(
      server,
      ownerJwt,
      projectId,
      ['prod'],
      [
        { key: 'API_URL', value: 'https://v1.example.com', type: 'plain' },
        { key: 'DB_PASSWORD', value: 'hunter2-prod', type: 'secret' },
        { key: 'OLD_FLAG', value: 'yes', type: 'plain' },
      ],
    );
    // A Developer with write on prod (an override: prod starts protected).
    const dev = await signupUser(server, 'Dave');
    const inv = await server.request('POST', '/v1/workspace/invites', {
      token: ownerJwt,
      body: { email: dev.email, wsRole: 'Member' },
    });
    expect(inv.status).toBe(200);
    devJwt = (
      await server.request('POST', '/v1/auth/switch-workspace', {
        token: dev.jwt,
        body: { workspaceId: session.body.user.workspaceId },
        schema: switchWorkspaceResponse,
      })
    ).body.token;
    for (const [method, path, body] of [
      ['PUT', `/v1/projects/${projectId}/members/${dev.user.id}`, { role: 'Developer' }],
      ['PUT', `/v1/projects/${projectId}/members/${dev.user.id}/envs/prod`, { permission: 'write' }],
    ] as const) {
      expect((await server.request(method, path, { token: ownerJwt, body })).status).toBe(200);
    }
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function signedIn(jwt: string, width = 1280) {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, jwt);
    return tab;
  }
  async function openVars(page: Page, env: string) {
    await page.goto(`/projects/${projectId}?tab=vars&env=${env}`);
    await page.getByTestId('value-API_URL').waitFor();
  }
  async function openRequests(page: Page) {
    await page.goto(`/projects/${projectId}?tab=requests&env=prod`);
    await page
      .getByRole('tab', { name: /Change requests/ })
      .and(page.locator('[aria-selected="true"]'))
      .waitFor();
  }

  it('the Owner turns approval on with the switch beside Protect, with its explanation', async () => {
    const { page, context, problems } = await signedIn(ownerJwt);
    await openVars(page, 'prod');
    const toggle = page.getByRole('switch', { name: 'Require approval' });
    expect(await toggle.isChecked()).toBe(false);
    await toggle.click();
    await page.getByText('prod now requires approval').waitFor();
    await page.getByText('Approval is on: changes to prod by Developers').waitFor();
    const prod = (
      await server.request('GET', `/v1/projects/${projectId}/envs`, { token: ownerJwt, schema: envList })
    ).body.envs.find((e) => e.name === 'prod');
    expect(prod?.requireApproval).toBe(true);
    // The Owner still writes directly: no pending bar for them.
    expect(await page.getByTestId('pending-bar').count()).toBe(0);
    await screenshot(page, 'cr-approval-switch-1280');
    expect(problems).toEqual([]);
    await context.close();
  });

  it("a Developer's edits become one change request; the Owner approves it in another browser and sees it applied", async () => {
    const dev = await signedIn(devJwt);
    const { page } = dev;
    await openVars(page, 'prod');
    await page.getByText('prod requires approval.').waitFor();
    // No switch for a Developer, and no import (it would write directly).
    expect(await page.getByRole('switch').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Import .env' }).count()).toBe(0);

    // Add, edit and delete: each is gathered, none is written.
    await page.getByLabel('New key').fill('FEATURE');
    await page.getByLabel('New value').fill('on');
    await page.getByLabel('Type', { exact: true }).selectOption('plain');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('button', { name: 'Edit API_URL' }).click();
    await page.getByLabel('Value of API_URL').fill('https://v2.example.com');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('button', { name: 'Delete OLD_FLAG' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    const bar = page.getByTestId('pending-bar');
    await bar.getByText('3 changes pending: review and submit').waitFor();
    expect(await bar.locator('.pending-item').allTextContents()).toEqual([
      expect.stringMatching(/^set\s*FEATURE\s*on/),
      expect.stringMatching(/^set\s*API_URL\s*https:\/\/v2\.example\.com/),
      expect.stringMatching(/^delete\s*OLD_FLAG/),
    ]);
    expect(await plainVars()).toEqual({
      API_URL: 'https://v1.example.com',
      DB_PASSWORD: 'hunter2-prod',
      OLD_FLAG: 'yes',
    });
    await screenshot(page, 'cr-pending-bar-1280');

    await bar.getByRole('button', { name: 'Review and submit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Submit 3 changes for review' });
    await dialog.getByLabel('Message').fill('Move to the v2 API and launch the feature');
    await dialog.getByRole('button', { name: 'Submit for review' }).click();
    await page.getByText('Change request opened on prod').waitFor();
    await page.getByText('prod requires approval.').waitFor();
    // The tab's badge counts it, and so does prod's tab among the Variables' environments.
    await page.getByTestId('open-requests').getByText('1').waitFor();
    await page.getByRole('tab', { name: /prod/ }).getByTestId('open-count-prod').getByText('1').waitFor();
    await screenshot(page, 'cr-badge-vars-1280');
    const [opened] = await requests('open');
    expect(opened?.changes.map((c) => [c.key, c.op])).toEqual([
      ['FEATURE', 'set'],
      ['API_URL', 'set'],
      ['OLD_FLAG', 'delete'],
    ]);
    expect(opened?.message).toBe('Move to the v2 API and launch the feature');

    // The author sees their request, and may withdraw but not approve it.
    await page.getByRole('tab', { name: /Change requests/ }).click();
    await page.getByTestId('open-count-prod').getByText('1').waitFor();
    await page.getByTestId(`cr-${opened!.id}`).click();
    await page.getByText('You opened this request').waitFor();
    expect(await page.getByRole('button', { name: 'Approve and apply' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Withdraw', exact: true }).waitFor();
    await screenshot(page, 'cr-detail-author-1280');

    // The Owner, in another browser: the badge, the diff (before and after, secrets masked), approval.
    const owner = await signedIn(ownerJwt);
    await openRequests(owner.page);
    await owner.page.getByTestId('open-requests').getByText('1').waitFor();
    await owner.page.getByTestId(`cr-${opened!.id}`).click();
    const detail = owner.page.getByTestId('cr-detail');
    await detail.getByTestId('cr-change-API_URL').getByText('https://v1.example.com').waitFor();
    expect(await detail.getByTestId('cr-change-API_URL').locator('.cr-new').textContent()).toContain(
      'https://v2.example.com',
    );
    expect(await detail.getByTestId('cr-change-FEATURE').textContent()).toContain('add');
    expect(await detail.getByTestId('cr-change-OLD_FLAG').textContent()).toContain('delete');
    await screenshot(owner.page, 'cr-detail-owner-1280');
    await detail.getByRole('button', { name: 'Approve and apply' }).click();
    await detail
      .getByTestId('cr-closed')
      .getByText(/Applied as revision \d+ by Olga/)
      .waitFor();
    expect(await plainVars()).toEqual({
      API_URL: 'https://v2.example.com',
      DB_PASSWORD: 'hunter2-prod',
      FEATURE: 'on',
    });
    await detail.getByRole('button', { name: 'Show the variables of prod' }).click();
    await owner.page.getByTestId('value-API_URL').getByText('https://v2.example.com').waitFor();
    await expect.poll(() => owner.page.getByTestId('open-requests').count()).toBe(0);
    await screenshot(owner.page, 'cr-applied-owner-1280');
    expect(dev.problems).toEqual([]);
    expect(owner.problems).toEqual([]);
    await dev.context.close();
    await owner.context.close();
  });

  it('a change made while the Developer edits is a 412 that offers to review again; the Owner rejects with a reason (390 px)', async () => {
    const dev = await signedIn(devJwt, 390);
    await openVars(dev.page, 'prod');
    await dev.page.getByLabel('New key').fill('TIMEOUT');
    await dev.page.getByLabel('New value').fill('30');
    await dev.page.getByRole('button', { name: 'Add', exact: true }).click();
    await dev.page.getByText('1 change pending: review and submit').waitFor();
    await screenshot(dev.page, 'cr-pending-bar-390');
    expect(await dev.page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);

    await ownerWrites('API_URL', 'https://v3.example.com');
    await dev.page.getByRole('button', { name: 'Review and submit' }).click();
    const dialog = dev.page.getByRole('dialog', { name: 'Submit 1 change for review' });
    await dialog.getByLabel('Message').fill('Longer timeout');
    await dialog.getByRole('button', { name: 'Submit for review' }).click();
    await dialog.getByTestId('submit-stale').getByText('prod changed after you loaded it').waitFor();
    expect(await requests('open')).toEqual([]);
    await dialog.getByRole('button', { name: 'Review again' }).click();
    await dev.page.getByTestId('value-API_URL').getByText('https://v3.example.com').waitFor();
    // The pending change survived; submitting now is based on what the Developer sees.
    await dev.page.getByRole('button', { name: 'Review and submit' }).click();
    await dev.page.getByLabel('Message').fill('Longer timeout');
    await dev.page.getByRole('button', { name: 'Submit for review' }).click();
    await dev.page.getByText('Change request opened on prod').waitFor();
    await dev.page.getByTestId('open-count-prod').getByText('1').waitFor();
    expect(await dev.page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    await screenshot(dev.page, 'cr-badge-vars-390');
    const [opened] = await requests('open');
    expect(opened?.changes.map((c) => c.key)).toEqual(['TIMEOUT']);

    const owner = await signedIn(ownerJwt, 390);
    await openRequests(owner.page);
    await owner.page.getByTestId(`cr-${opened!.id}`).click();
    await owner.page.getByRole('button', { name: 'Reject…' }).click();
    await owner.page.getByLabel('Reason').fill('30 s is too long for checkout');
    await owner.page.getByRole('button', { name: 'Reject request' }).click();
    await owner.page.getByTestId('cr-closed').getByText('Rejected by Olga').waitFor();
    await screenshot(owner.page, 'cr-rejected-owner-390');
    expect(await owner.page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
    expect((await requests('rejected'))[0]?.reason).toBe('30 s is too long for checkout');
    expect((await plainVars()).TIMEOUT).toBeUndefined();

    // The author finds it under Rejected, with the reason.
    await openRequests(dev.page);
    await dev.page.getByRole('button', { name: 'Rejected' }).click();
    await dev.page.getByTestId(`cr-${opened!.id}`).click();
    await dev.page.getByText('“30 s is too long for checkout”').waitFor();
    await screenshot(dev.page, 'cr-rejected-author-390');
    expect(dev.problems).toEqual([]);
    expect(owner.problems).toEqual([]);
    await dev.context.close();
    await owner.context.close();
  });

  it('the author withdraws an open request; the badges follow', async () => {
    const opened = await openByDev('Rotate the password', [{ key: 'DB_PASSWORD', value: 'rotated-1' }]);
    const { page, context, problems } = await signedIn(devJwt);
    await openRequests(page);
    await page.getByTestId('open-requests').getByText('1').waitFor();
    await page.getByTestId('open-count-prod').getByText('1').waitFor();
    await screenshot(page, 'cr-list-1280');
    await page.getByTestId(`cr-${opened.id}`).click();
    // The proposed secret is masked until revealed (an audited reveal, with write).
    const row = page.getByTestId('cr-change-DB_PASSWORD');
    expect(await row.locator('.cr-new').textContent()).not.toContain('rotated-1');
    await page.getByRole('button', { name: 'Reveal values' }).click();
    await row.locator('.cr-new').getByText('rotated-1').waitFor();
    await row.locator('.cr-old').getByText('hunter2-prod').waitFor();
    await page.getByRole('button', { name: 'Withdraw', exact: true }).click();
    await page.getByTestId('cr-closed').getByText('Withdrawn').waitFor();
    expect((await requests('withdrawn')).map((r) => r.id)).toContain(opened.id);
    // The badges reload their counts after the withdrawal answered (one request later than the page's text).
    await expect.poll(() => page.getByTestId('open-requests').count()).toBe(0);
    await expect.poll(() => page.getByTestId('open-count-prod').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('approving a request whose key changed since it was opened explains the conflict (409) and keeps it open', async () => {
    const opened = await openByDev('Point at the v4 API', [{ key: 'API_URL', value: 'https://v4.example.com' }]);
    await ownerWrites('API_URL', 'https://v5.example.com');
    const { page, context, problems } = await signedIn(ownerJwt);
    await openRequests(page);
    await page.getByTestId(`cr-${opened.id}`).click();
    await page.getByRole('button', { name: 'Approve and apply' }).click();
    await page.getByTestId('cr-conflict').getByText('API_URL').waitFor();
    expect(await page.getByTestId('cr-conflict').textContent()).toContain(
      'API_URL changed in prod after this request was opened',
    );
    await screenshot(page, 'cr-conflict-1280');
    expect((await requests('open')).map((r) => r.id)).toEqual([opened.id]);
    expect((await plainVars()).API_URL).toBe('https://v5.example.com');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('a member who may only read prod sees the open-request badge on its tab, and no add form (1280 and 390 px)', async () => {
    const reader = await signupUser(server, 'Rita');
    const owner = await server.request('GET', '/v1/auth/session', { token: ownerJwt, schema: sessionResponse });
    const inv = await server.request('POST', '/v1/workspace/invites', {
      token: ownerJwt,
      body: { email: reader.email, wsRole: 'Member' },
    });
    expect(inv.status).toBe(200);
    const readerJwt = (
      await server.request('POST', '/v1/auth/switch-workspace', {
        token: reader.jwt,
        body: { workspaceId: owner.body.user.workspaceId },
        schema: switchWorkspaceResponse,
      })
    ).body.token;
    for (const [method, path, body] of [
      ['PUT', `/v1/projects/${projectId}/members/${reader.user.id}`, { role: 'Developer' }],
      ['PUT', `/v1/projects/${projectId}/members/${reader.user.id}/envs/prod`, { permission: 'read' }],
    ] as const) {
      expect((await server.request(method, path, { token: ownerJwt, body })).status).toBe(200);
    }
    await openByDev('Longer cache', [{ key: 'CACHE_TTL', value: '600' }]);
    const open = (await requests('open')).length;
    for (const width of [1280, 390]) {
      const { page, context, problems } = await signedIn(readerJwt, width);
      await openVars(page, 'prod');
      await page.getByTestId('open-count-prod').getByText(String(open)).waitFor();
      await page.getByTestId('read-only-note').waitFor();
      expect(await page.getByLabel('New key').count()).toBe(0);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth)).toBe(true);
      await screenshot(page, `cr-badge-vars-reader-${width}`);
      expect(problems).toEqual([]);
      await context.close();
    }
  });
});
