/**
 * D60 and D62 in the dashboard: an Owner creates a workload identity from the GitHub Actions preset (the
 * `<…>` placeholders must be filled first), sees the snippet to paste, edits and deletes it; a token gets
 * "Allowed from" ranges, checked in the browser by the server's rule and shown on its row; a Member sees no
 * Identities entry. Debian's chromium against the real server, at 1280 and 390 px; screenshots go to
 * test-artifacts/.
 */
import { listIdentitiesResponse, listTokensResponse, sessionResponse, switchWorkspaceResponse } from '@svcenv/contract';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, signupUser, startApp, upsert } from '../../server/test/harness.js';
import { type Issuer, startIssuer } from '../../server/test/oidc-issuer.js';
import { chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

describe.skipIf(!chromiumAvailable())('workload identities and token ranges in the dashboard (D60, D62)', () => {
  let server: Awaited<ReturnType<typeof startApp>>;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let memberJwt: string;
  let issuer: Issuer;
  let project: Awaited<ReturnType<typeof createProject>>;

  beforeAll(async () => {
    // Issuers are checked like webhook targets (D5): every host resolves to a public address here, offline.
    // The local test issuer is http on loopback: allowed with WEBHOOK_ALLOW_PRIVATE.
    [server, browser, issuer] = await Promise.all([
      startApp({
        env: { LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE: 'true' },
        resolve: async (host) => [{ address: host === '127.0.0.1' ? host : '140.82.112.3', family: 4 }],
      }),
      launch(),
      startIssuer(),
    ]);
    owner = await signupUser(server, 'Owner');
    project = await createProject(server, owner.jwt, { name: 'shop' });
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
    await issuer?.stop();
  });

  async function signedIn(jwt: string, width: number) {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, jwt);
    return tab;
  }
  const identities = async () =>
    (
      await server.request('GET', '/v1/workspace/identities', {
        token: owner.jwt,
        schema: listIdentitiesResponse,
      })
    ).body.identities;

  it('creates an identity from the GitHub preset, shows its snippet, edits and deletes it', async () => {
    const { page, problems } = await signedIn(owner.jwt, 1280);
    try {
      await page.goto('/projects');
      await page.getByRole('link', { name: 'Identities' }).click();
      await page.getByText('No identities').waitFor();
      await page.getByRole('button', { name: 'New identity' }).click();
      const dlg = page.getByRole('dialog', { name: 'New identity' });
      expect(await dlg.getByRole('button', { name: 'GitHub Actions' }).getAttribute('aria-pressed')).toBe('true');
      expect(await dlg.locator('[name=issuer]').inputValue()).toBe('https://token.actions.githubusercontent.com');
      expect(await dlg.locator('[name=audience]').inputValue()).toBe(server.url);
      expect(await dlg.locator('[name=subject]').inputValue()).toBe('repo:<owner>/<repo>:*');
      await dlg.locator('[name=name]').fill('gh-deploy');
      await screenshot(page, 'identities-dialog-1280');

      // The preset's placeholder is refused before anything is sent.
      await dlg.getByRole('button', { name: 'Create identity' }).click();
      await dlg.getByText('replace the <…> parts of the subject').waitFor();
      expect(await identities()).toEqual([]);

      await dlg.locator('[name=subject]').fill('repo:acme/shop:*');
      await dlg.getByLabel('repository value').fill('acme/shop');
      await dlg.locator('[name=trustedCidrs]').fill('10.0.0.0/8\n2001:db8::/32');
      await dlg.getByRole('button', { name: 'Create identity' }).click();

      const [created] = await identities();
      expect(created).toMatchObject({
        name: 'gh-deploy',
        issuer: 'https://token.actions.githubusercontent.com',
        audience: server.url,
        subject: 'repo:acme/shop:*',
        // The preset's ref and environment rows were left empty: not checked, not sent.
        claims: { repository: 'acme/shop' },
        scope: 'read',
        envs: ['*'],
        ttlSeconds: 900,
        trustedCidrs: ['10.0.0.0/8', '2001:db8::/32'],
      });

      // Right after creating: what to paste into the workflow, with the identity's id.
      const snippet = (await page.getByTestId('identity-snippet').textContent())!;
      expect(snippet).toContain(`SVCENV_IDENTITY: ${created!.id}`);
      expect(snippet).toContain(`audience=${server.url}`);
      expect(snippet).toContain('/v1/auth/oidc');
      await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();

      const row = page.getByTestId('identity-row');
      await expect.poll(() => row.textContent()).toContain('gh-deploy');
      await expect.poll(() => row.textContent()).toContain('repository = acme/shop');
      await expect.poll(() => row.getByTestId('identity-cidrs').textContent()).toBe('10.0.0.0/8, 2001:db8::/32');
      await expect.poll(() => row.textContent()).toContain('never');
      await screenshot(page, 'identities-1280');

      await page.getByRole('button', { name: 'Edit gh-deploy' }).click();
      const edit = page.getByRole('dialog');
      await expect.poll(() => edit.getByRole('button', { name: 'GitHub Actions' }).count()).toBe(0);
      await edit.getByRole('button', { name: 'write' }).click();
      await edit.locator('[name=ttlSeconds]').fill('1800');
      await edit.locator('[name=trustedCidrs]').fill('');
      await edit.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => row.textContent()).toContain('tokens live 30 min');
      expect((await identities())[0]).toMatchObject({
        scope: 'write',
        ttlSeconds: 1800,
        trustedCidrs: [],
        claims: { repository: 'acme/shop' },
      });
      await expect.poll(() => row.getByTestId('identity-cidrs').textContent()).toBe('anywhere');

      await page.getByRole('button', { name: 'Delete gh-deploy' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByText('No identities').waitFor();
      expect(await identities()).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('fits a phone: the page and the dialog at 390 px', async () => {
    const made = await server.request('POST', '/v1/workspace/identities', {
      token: owner.jwt,
      body: {
        name: 'payments-pod',
        issuer: 'https://oidc.eks.eu-west-1.amazonaws.com/id/ABC',
        audience: server.url,
        subject: 'system:serviceaccount:payments:payments',
        envs: ['*'],
        trustedCidrs: ['10.0.0.0/8'],
      },
    });
    expect(made.status).toBe(201);
    const { page, problems } = await signedIn(owner.jwt, 390);
    try {
      await page.goto('/identities');
      await page.getByTestId('identity-row').waitFor();
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width).toBeLessThanOrEqual(390);
      await screenshot(page, 'identities-390');
      await page.getByRole('button', { name: 'Set up payments-pod' }).click();
      // Kubernetes, found by its subject: the projected token's audience.
      await expect.poll(() => page.getByTestId('identity-snippet').textContent()).toContain('serviceAccountToken:');
      await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
      await page.getByRole('button', { name: 'New identity' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Kubernetes' }).click();
      expect(await page.getByRole('dialog').locator('[name=subject]').inputValue()).toBe(
        'system:serviceaccount:<namespace>:<name>',
      );
      await screenshot(page, 'identities-dialog-390');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('gives a token "Allowed from" ranges, checked in the browser, shown on its row', async () => {
    const { page, problems } = await signedIn(owner.jwt, 1280);
    try {
      await page.goto('/tokens');
      await page.getByRole('button', { name: 'New token' }).click();
      const dlg = page.getByRole('dialog');
      await dlg.locator('[name=name]').fill('ci');
      const ranges = dlg.locator('[name=trustedCidrs]');
      await ranges.fill('203.0.113.0/24, 10.0.0.300');
      await expect
        .poll(() => dlg.getByTestId('cidr-error').textContent())
        .toBe('10.0.0.300 is not an IPv4 or IPv6 address or CIDR range');
      expect(await dlg.getByRole('button', { name: 'Create token' }).isDisabled()).toBe(true);
      await ranges.fill('203.0.113.0/24, 2001:db8::/32');
      await expect.poll(() => dlg.getByTestId('cidr-error').count()).toBe(0);
      await dlg.getByRole('button', { name: 'Create token' }).click();
      await page.getByTestId('once-secret').waitFor();
      await page.getByRole('dialog').getByRole('button', { name: 'I have saved it' }).click();
      await expect.poll(() => page.getByTestId('token-cidrs').textContent()).toBe('from 203.0.113.0/24, 2001:db8::/32');
      const list = await server.request('GET', '/v1/tokens', { token: owner.jwt, schema: listTokensResponse });
      expect(list.body.tokens.find((t) => t.name === 'ci')?.trustedCidrs).toEqual(['203.0.113.0/24', '2001:db8::/32']);
      await screenshot(page, 'tokens-ranges-1280');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('shows an identity as the actor of what its token did, with a badge, not as identity:<name>', async () => {
    const made = await server.request('POST', '/v1/workspace/identities', {
      token: owner.jwt,
      body: { name: 'ci-bot', issuer: issuer.url, audience: 'svcenv-test', scope: 'write', envs: ['*'] },
    });
    expect(made.status).toBe(201);
    const now = Math.floor(Date.now() / 1000);
    const jwt = await issuer.sign({ iss: issuer.url, aud: 'svcenv-test', sub: 'ci', iat: now, exp: now + 300 });
    const login = await server.request('POST', '/v1/auth/oidc', {
      body: { identity: (made.body as { id: string }).id, token: jwt },
    });
    expect(login.status).toBe(201);
    await upsert(
      server,
      (login.body as { token: string }).token,
      project.id,
      [project.envs[0]!],
      [{ key: 'FROM_CI', value: '1' }],
    );
    const { page, problems } = await signedIn(owner.jwt, 1280);
    try {
      await page.goto('/audit');
      const actor = page.locator('[data-actor-kind=identity]').first();
      await actor.waitFor();
      expect((await actor.textContent())?.replace(/\s+/g, ' ').trim()).toBe('identity ci-bot');
      expect(await page.getByTestId('audit-actor').allTextContents()).not.toContain('identity:ci-bot');
      await screenshot(page, 'identities-audit-1280');

      // The variable's history names the identity too (its id is the writer), for an Owner.
      await page.goto(`/projects/${project.id}`);
      await page.getByRole('button', { name: 'History of FROM_CI' }).click();
      const by = page.getByRole('dialog', { name: 'History of FROM_CI' }).getByTestId('history-by');
      await expect.poll(async () => (await by.textContent())?.replace(/\s+/g, ' ').trim()).toBe('by identity ci-bot');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('offers Identities to Owners only', async () => {
    const { page } = await signedIn(memberJwt, 1280);
    try {
      await page.goto('/projects');
      await page.getByRole('link', { name: 'Access tokens' }).waitFor();
      await expect.poll(() => page.getByRole('link', { name: 'Identities' }).count()).toBe(0);
      await page.goto('/identities');
      await page.getByText('Owners only').waitFor();
    } finally {
      await page.close();
    }
  });
});
