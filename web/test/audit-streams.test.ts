/**
 * D65 in the dashboard: an Owner adds an audit stream under Webhooks, copies its secret from the dialog that
 * shows it once, and sees each stream's lag and last attempt; a dead stream shows as behind with no response;
 * delete asks first. A Member sees no such section. Debian's chromium against the real server, at 1280 and
 * 390 px; screenshots go to test-artifacts/.
 */
import { createServer } from 'node:net';
import { sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ServerProcess, signupUser, startServer } from '../../server/test/harness.js';
import { type Receiver, signatureValid, startReceiver, streamBatchOf } from '../../server/test/receiver.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

/** A loopback port nothing listens on: the dead stream's target. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe.skipIf(!chromiumAvailable())('audit streams in the dashboard (D65)', () => {
  let server: ServerProcess;
  let browser: Browser;
  let rx: Receiver;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let memberJwt: string;

  beforeAll(async () => {
    [server, browser, rx] = await Promise.all([
      startServer({ env: { LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE: 'true' } }),
      launch(),
      startReceiver(),
    ]);
    owner = await signupUser(server, 'Owner');
    await createProject(server, owner.jwt, { name: 'shop' });
    const session = await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    const m = await signupUser(server, 'Mia');
    const inv = await server.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: m.email, wsRole: 'Member' },
    });
    expect(inv.status).toBe(200);
    const sw = await server.request('POST', '/v1/auth/switch-workspace', {
      token: m.jwt,
      body: { workspaceId: session.body.user.workspaceId },
      schema: switchWorkspaceResponse,
    });
    memberJwt = sw.body.token;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await rx?.stop();
  });

  async function signedIn(jwt: string, width: number) {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, jwt);
    return tab;
  }

  it('adds a stream, shows its secret once, its lag and last attempt, and deletes after asking', async () => {
    const { page, context, problems } = await signedIn(owner.jwt, 1280);
    try {
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.goto('/webhooks');
      const section = page.getByRole('region', { name: 'Audit streams' });
      await section.getByText('No audit streams.').waitFor();

      await section.getByRole('button', { name: 'Add stream' }).click();
      const url = rx.url('/audit');
      await page.getByLabel('URL').fill(url);
      await page.getByRole('dialog').getByRole('button', { name: 'Add stream' }).click();
      const secret = (await page.getByTestId('once-secret').textContent())!.trim();
      expect(secret).toMatch(/^whsec_/);
      await page.getByRole('button', { name: 'Copy' }).click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
      await screenshot(page, 'audit-streams-secret-1280');
      await page.getByRole('button', { name: 'I have saved it' }).click();
      await expect.poll(() => page.getByTestId('once-secret').count()).toBe(0);

      // The secret from the dialog verifies what the receiver got.
      await rx.waitFor(1, (r) => r.path === '/audit');
      const first = rx.received.find((r) => r.path === '/audit')!;
      expect(signatureValid(first, secret)).toBe(true);
      expect(streamBatchOf(first).entries[0]!.action).toBe('audit_stream.create');

      // A second stream nobody answers.
      await section.getByRole('button', { name: 'Add stream' }).click();
      await page.getByLabel('URL').fill(`http://127.0.0.1:${await closedPort()}/down`);
      await page.getByRole('dialog').getByRole('button', { name: 'Add stream' }).click();
      await page.getByRole('button', { name: 'I have saved it' }).click();

      const healthy = section.getByRole('listitem').filter({ hasText: url });
      await healthy.getByText('up to date').waitFor({ timeout: 15_000 });
      await healthy.getByText('200').waitFor({ timeout: 15_000 });
      const dead = section.getByRole('listitem').filter({ hasText: '/down' });
      await dead.getByText(/entr(y|ies) behind/).waitFor({ timeout: 15_000 });
      await dead.getByText('no response').waitFor({ timeout: 15_000 });
      await screenshot(page, 'audit-streams-1280');

      const narrow = await signedIn(owner.jwt, 390);
      try {
        await narrow.page.goto('/webhooks');
        const s = narrow.page.getByRole('region', { name: 'Audit streams' });
        await s.getByText('up to date').waitFor();
        await s.getByText('no response').waitFor();
        const size = await narrow.page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          width: window.innerWidth,
        }));
        expect(size).toEqual({ scroll: 390, width: 390 });
        await screenshot(narrow.page, 'audit-streams-390');
        expect(narrow.problems).toEqual([]);
      } finally {
        await narrow.context.close();
      }

      await dead.getByRole('button', { name: /Delete audit stream/ }).click();
      await page.getByRole('dialog').getByText('/down').waitFor();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
      await expect.poll(() => section.getByRole('listitem').count()).toBe(1);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows a Member no audit streams section', async () => {
    const { page, context, problems } = await signedIn(memberJwt, 1280);
    try {
      const asked: string[] = [];
      page.on('request', (r) => asked.push(r.url()));
      await page.goto('/webhooks');
      await page.getByRole('heading', { name: 'No webhooks' }).waitFor();
      await page.waitForTimeout(500);
      // Not even asked: the list is Owner-only, and a Member would only get a 403.
      expect(asked.filter((u) => u.includes('/audit-streams'))).toEqual([]);
      expect(await page.getByRole('region', { name: 'Audit streams' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Add stream' }).count()).toBe(0);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
