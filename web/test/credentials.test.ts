/**
 * D70-D72 in the dashboard, against the real server and the machine's MariaDB (which checks passwords): an
 * Admin adds a connection (the password never reaches the page), tests it and reads the answer in words,
 * edits it without retyping the password, rotates its root password behind a confirmation; a lease made
 * through the API appears on the Credentials tab and "Revoke" there removes the database user; a revocation
 * the database cannot run shows loudly; "Rotate now" changes a stored password; a Read-only member sees no
 * Connections tab and no revoke button on someone else's lease, but one on their own, while an Admin has one on
 * every lease (D57); an Admin's "Who has access" beside the environment shows D76's list, a reader has none.
 * Debian's chromium;
 * screenshots of every screen at 1280 and 390 px go to test-artifacts/ (and /tmp/shots-web42 when asked).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  connection as connectionSchema,
  createdLease,
  listConnectionsResponse,
  listLeasesResponse,
  listVarsResponse,
  rotation as rotationSchema,
  sessionResponse,
  switchWorkspaceResponse,
} from '@svcenv/contract';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, signupUser, startApp, until, upsert } from '../../server/test/harness.js';
import {
  MARIADB,
  mariadbAdmin,
  mariadbCanLogin,
  mariadbRoot,
  mariadbUserExists,
  startRelay,
} from '../../server/test/managed-dbs.js';
import { artifacts, chromiumAvailable, launch, openTab, screenshot, signIn } from './browser.js';

/** Where the screenshots for a person to look at go as well (SHOTS_DIR), besides test-artifacts/. */
const SHOTS = process.env.SHOTS_DIR;

describe.skipIf(!chromiumAvailable())('connections, leases and rotations in the dashboard (D70-D72)', () => {
  let server: Awaited<ReturnType<typeof startApp>>;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof signupUser>>;
  let reader: { jwt: string; name: string };
  let admin: { jwt: string; id: string };
  let dev: { jwt: string; id: string; email: string };
  let projectId: string;
  let maria: Awaited<ReturnType<typeof mariadbAdmin>>;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  const dbUsers: string[] = [];

  beforeAll(async () => {
    [server, browser, maria, relay] = await Promise.all([
      startApp({ env: { LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise', CONNECTIONS_TIMEOUT_MS: '1500' } }),
      launch(),
      mariadbAdmin(),
      startRelay(MARIADB),
    ]);
    owner = await signupUser(server, 'Olga');
    projectId = (await createProject(server, owner.jwt, { name: 'shop', envs: ['dev', 'prod'] })).id;
    const session = await server.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse });
    const r = await signupUser(server, 'Rey');
    const inv = await server.request('POST', '/v1/workspace/invites', {
      token: owner.jwt,
      body: { email: r.email, wsRole: 'Member' },
    });
    expect(inv.status).toBe(200);
    const sw = await server.request('POST', '/v1/auth/switch-workspace', {
      token: r.jwt,
      body: { workspaceId: session.body.user.workspaceId },
      schema: switchWorkspaceResponse,
    });
    const added = await server.request('PUT', `/v1/projects/${projectId}/members/${r.user.id}`, {
      token: owner.jwt,
      body: { role: 'Read-only' },
    });
    expect(added.status, added.text).toBe(200);
    reader = { jwt: sw.body.token, name: 'Rey' };
    // A project Admin (revokes any lease, lists who has access) and a Developer (none on protected prod).
    const join = async (name: string, role: 'Admin' | 'Developer') => {
      const u = await signupUser(server, name);
      const invited = await server.request('POST', '/v1/workspace/invites', {
        token: owner.jwt,
        body: { email: u.email, wsRole: 'Member' },
      });
      expect(invited.status).toBe(200);
      const switched = await server.request('POST', '/v1/auth/switch-workspace', {
        token: u.jwt,
        body: { workspaceId: session.body.user.workspaceId },
        schema: switchWorkspaceResponse,
      });
      const member = await server.request('PUT', `/v1/projects/${projectId}/members/${u.user.id}`, {
        token: owner.jwt,
        body: { role },
      });
      expect(member.status, member.text).toBe(200);
      return { jwt: switched.body.token, id: u.user.id, email: u.email };
    };
    admin = await join('Ada', 'Admin');
    dev = await join('Dev', 'Developer');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await relay?.stop();
    await mariadbRoot(async (c) => {
      for (const u of dbUsers) await c.query(`DROP USER IF EXISTS '${u}'@'%'`);
    }).catch(() => undefined);
    await maria?.drop();
  });

  const path = (rest: string) => `/v1/projects/${projectId}${rest}`;
  const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', p: string, body?: unknown, token = owner.jwt) =>
    server.request(method, path(p), { token, ...(body === undefined ? {} : { body }) });

  async function signedIn(jwt: string, width = 1280) {
    const tab = await openTab(browser, server.url, width);
    await signIn(tab, server.url, jwt);
    return tab;
  }

  /** The whole page; with a dialog open, the screen as a person sees it (the backdrop covers the viewport). */
  async function shot(page: Page, name: string) {
    const dialog = (await page.locator('dialog[open]').count()) > 0;
    if (!dialog) await screenshot(page, name);
    if (SHOTS || dialog) {
      const dir = SHOTS ?? artifacts;
      mkdirSync(dir, { recursive: true });
      await page.screenshot({ path: join(dir, `${name}.png`), fullPage: !dialog });
    }
  }

  /** Nothing the user did not ask to reveal: no stored or leased password anywhere in the page. */
  async function noSecretsIn(page: Page, secrets: string[]) {
    const html = await page.content();
    for (const s of secrets) expect(html).not.toContain(s);
  }

  const connections = async () => listConnectionsResponse.parse((await api('GET', '/connections')).body).connections;

  it('adds a connection (its password never shown), tests it in words, edits and deletes one', async () => {
    const { page, problems } = await signedIn(owner.jwt);
    try {
      await page.goto(`/projects/${projectId}?tab=connections`);
      await page.getByText('No connections').waitFor();
      await page.getByRole('button', { name: 'Add connection' }).first().click();
      const dlg = page.getByRole('dialog', { name: 'Add connection' });
      await dlg.locator('[name=name]').fill('maria');
      await dlg.locator('select[name=kind]').selectOption('mysql');
      await dlg.locator('[name=host]').fill('127.0.0.1');
      await dlg.locator('[name=port]').fill(String(MARIADB.port));
      await dlg.locator('[name=username]').fill(maria.username);
      await dlg.locator('[name=password]').fill(maria.password);
      await dlg.locator('select[name=tls]').selectOption('disable');
      await shot(page, 'connections-add-1280');
      await dlg.getByRole('button', { name: 'Add connection' }).click();
      const row = page.getByTestId('connection-row');
      await expect.poll(() => row.textContent()).toContain('maria');
      expect(await row.textContent()).toContain(`127.0.0.1:${MARIADB.port}`);
      expect(await row.textContent()).toContain(maria.username);
      expect(await row.textContent()).toContain('no TLS');
      expect(await row.getByTestId('connection-used-by').textContent()).toBe('nothing');
      await noSecretsIn(page, [maria.password]);

      // The test answers in words: it works.
      await page.getByRole('button', { name: 'Test maria', exact: true }).click();
      const test = page.getByRole('dialog', { name: 'Test maria', exact: true });
      await test.getByRole('button', { name: 'Run the test' }).click();
      const answer = test.getByTestId('connection-test');
      await expect.poll(() => answer.textContent()).toMatch(/^It works:\s*\S/);
      await shot(page, 'connections-test-ok-1280');
      await test.getByRole('button', { name: 'Close' }).first().click();

      // Editing shows an empty password field and keeps the stored password when left so.
      await page.getByRole('button', { name: 'Edit maria' }).click();
      const edit = page.getByRole('dialog', { name: 'Edit maria' });
      expect(await edit.locator('[name=password]').inputValue()).toBe('');
      await edit.getByText('Leave empty to keep it').waitFor();
      await edit.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Connection maria saved').waitFor();
      const [kept] = await connections();
      expect(kept).toMatchObject({ name: 'maria', username: maria.username });

      // A wrong password: the test fails, and says so in words (the API's message), without the password.
      const wrong = `nope${randomBytes(6).toString('hex')}`;
      const bad = await api('POST', '/connections', {
        name: 'maria-wrong',
        kind: 'mysql',
        host: '127.0.0.1',
        username: maria.username,
        password: wrong,
        tls: { mode: 'disable' },
      });
      expect(bad.status, bad.text).toBe(201);
      await page.reload();
      await page.getByRole('button', { name: 'Test maria-wrong' }).click();
      const badTest = page.getByRole('dialog', { name: 'Test maria-wrong' });
      await badTest.getByRole('button', { name: 'Run the test' }).click();
      const badAnswer = badTest.getByTestId('connection-test');
      await expect.poll(() => badAnswer.textContent()).toMatch(/^It failed:\s*\S/);
      const message = (await badAnswer.textContent())!;
      expect(message.length).toBeGreaterThan('It failed: '.length + 5);
      expect(message).not.toContain(wrong);
      await shot(page, 'connections-test-failed-1280');
      await badTest.getByRole('button', { name: 'Close' }).first().click();
      await page.getByRole('button', { name: 'Delete maria-wrong' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete connection' }).click();
      await expect.poll(async () => (await connections()).map((c) => c.name)).toEqual(['maria']);

      await shot(page, 'connections-1280');
      expect(problems).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 60_000);

  it('a lease made through the API appears; Revoke in the dashboard removes its database user', async () => {
    const decl = await api('PUT', '/envs/dev/dynamic/app', {
      connection: 'maria',
      create: [`CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'`],
      defaultTtlSeconds: 1800,
    });
    expect(decl.status, decl.text).toBe(200);
    const leased = await api('POST', '/envs/dev/dynamic/app/leases', {});
    expect(leased.status, leased.text).toBe(201);
    const lease = createdLease.parse(leased.body);
    const password = lease.values.APP_PASSWORD!;
    expect(await mariadbCanLogin(lease.username, password)).toBe(true);

    const { page, problems } = await signedIn(owner.jwt);
    try {
      await page.goto(`/projects/${projectId}?tab=credentials&env=dev`);
      const card = page.getByTestId('dynamic-secret');
      await expect.poll(() => card.textContent()).toContain('app');
      expect(await card.textContent()).toContain('maria');
      expect(await card.textContent()).toContain('30 min');
      expect(await card.getByTestId('open-leases').textContent()).toBe('1 of at most 100');
      const row = page.locator(`[data-testid=lease-row][data-username="${lease.username}"]`);
      await expect.poll(() => row.getByTestId('lease-state').getAttribute('data-state')).toBe('active');
      expect(await row.textContent()).toContain('Olga');
      await noSecretsIn(page, [password, maria.password]);
      await shot(page, 'credentials-1280');

      await row.getByRole('button', { name: `Revoke ${lease.username}` }).click();
      await page.getByText(`${lease.username} revoked`).waitFor();
      // Open leases only, by default: it is gone; "Show ended" has it as revoked.
      await expect.poll(() => row.count()).toBe(0);
      await card.getByLabel('Show ended').check();
      await expect.poll(() => row.getByTestId('lease-state').getAttribute('data-state')).toBe('revoked');
      expect(await mariadbUserExists(lease.username)).toBe(false);
      expect(await mariadbCanLogin(lease.username, password)).toBe(false);
      expect(problems).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 60_000);

  it('a revocation the database cannot run is shown loudly, in words, and retried', async () => {
    const conn = await api('POST', '/connections', {
      name: 'maria-far',
      kind: 'mysql',
      host: '127.0.0.1',
      port: relay.port,
      username: maria.username,
      password: maria.password,
      tls: { mode: 'disable' },
    });
    expect(conn.status, conn.text).toBe(201);
    expect(
      (
        await api('PUT', '/envs/dev/dynamic/flaky', {
          connection: 'maria-far',
          create: [`CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'`],
        })
      ).status,
    ).toBe(200);
    const lease = createdLease.parse((await api('POST', '/envs/dev/dynamic/flaky/leases', {})).body);
    await relay.down();
    const refused = await api('DELETE', `/envs/dev/dynamic/flaky/leases/${lease.id}`);
    expect(refused.status).toBe(502);

    const { page, problems } = await signedIn(owner.jwt);
    try {
      await page.goto(`/projects/${projectId}?tab=credentials&env=dev`);
      const row = page.locator(`[data-testid=lease-row][data-username="${lease.username}"]`);
      await expect.poll(() => row.getByTestId('lease-state').getAttribute('data-state')).toBe('revoke_failed');
      expect(await row.locator('.pill-bad').textContent()).toBe('revoke failed');
      const words = (await row.getByTestId('lease-error').textContent())!;
      expect(words).toContain('The database may still hold this user; svcenv keeps retrying.');
      expect(words.length).toBeGreaterThan(60);
      const card = page.locator('[data-testid=dynamic-secret][data-name=flaky]');
      expect(await card.locator('.pill-bad').first().textContent()).toBe('1 revoke failing');
      expect(await row.getByRole('button', { name: `Revoke ${lease.username}` }).textContent()).toBe('Retry revoke');
      await shot(page, 'credentials-revoke-failed-1280');
      await page.setViewportSize({ width: 390, height: 844 });
      await shot(page, 'credentials-revoke-failed-390');
      await page.setViewportSize({ width: 1280, height: 860 });
      expect(problems.filter((p) => !/502/.test(p))).toEqual([]);
    } finally {
      await page.context().close();
      await relay.up();
    }
    // Back: the job finishes it.
    await until(
      'the retried revocation',
      async () =>
        listLeasesResponse
          .parse((await api('GET', '/envs/dev/dynamic/flaky/leases?state=all')).body)
          .leases.find((l) => l.id === lease.id)?.state === 'revoked',
      30_000,
    );
  }, 90_000);

  it('"Rotate now" changes the stored password in the database and the variable', async () => {
    const name = `svcenv_t_web_${randomBytes(3).toString('hex')}`;
    const first = `init${randomBytes(8).toString('hex')}`;
    await mariadbRoot((c) => c.query(`CREATE USER '${name}'@'%' IDENTIFIED BY '${first}'`));
    dbUsers.push(name);
    await upsert(server, owner.jwt, projectId, ['dev'], [{ key: 'DB_PASSWORD', value: first, type: 'secret' }]);
    const bind = await api('PUT', '/envs/dev/rotations/DB_PASSWORD', {
      connection: 'maria',
      username: name,
      intervalSeconds: 86_400,
    });
    expect(bind.status, bind.text).toBe(200);
    expect(rotationSchema.parse(bind.body).lastRotatedAt).toBeNull();

    const { page, problems } = await signedIn(owner.jwt);
    try {
      await page.goto(`/projects/${projectId}?tab=credentials&env=dev`);
      const row = page.getByTestId('rotation-row');
      await expect.poll(() => row.textContent()).toContain('DB_PASSWORD');
      expect(await row.textContent()).toContain('every 1 day');
      expect(await row.getByTestId('rotation-last').textContent()).toBe('never');
      await row.getByRole('button', { name: 'Rotate DB_PASSWORD now' }).click();
      await page.getByText('DB_PASSWORD rotated').waitFor();
      await expect.poll(() => row.getByTestId('rotation-last').textContent()).toBe('just now');
      const vars = listVarsResponse.parse((await api('GET', '/envs/dev/vars?reveal=true')).body).vars;
      const now = vars.find((v) => v.key === 'DB_PASSWORD')!.value!;
      expect(now).not.toBe(first);
      expect(await mariadbCanLogin(name, first)).toBe(false);
      expect(await mariadbCanLogin(name, now)).toBe(true);
      await noSecretsIn(page, [first, now]);
      await shot(page, 'credentials-rotated-1280');
      expect(problems).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 60_000);

  it('a Read-only member sees no Connections and no revoke on leases not theirs, but on their own (D57)', async () => {
    const others = createdLease.parse((await api('POST', '/envs/dev/dynamic/app/leases', {})).body);
    const own = createdLease.parse((await api('POST', '/envs/dev/dynamic/app/leases', {}, reader.jwt)).body);
    const { page, problems } = await signedIn(reader.jwt);
    try {
      await page.goto(`/projects/${projectId}?tab=connections`);
      // No Connections tab: the Variables tab instead of a refusal.
      await page.getByRole('tab', { name: 'Variables' }).waitFor();
      expect(await page.getByRole('tab', { name: 'Connections' }).count()).toBe(0);
      await page.getByRole('tab', { name: 'Credentials' }).click();
      await page.getByTestId('credentials-read-only').waitFor();
      const theirs = page.locator(`[data-testid=lease-row][data-username="${others.username}"]`);
      const mine = page.locator(`[data-testid=lease-row][data-username="${own.username}"]`);
      await theirs.waitFor();
      expect(await theirs.getByRole('button').count()).toBe(0);
      expect(await theirs.getByTestId('revoke-explained').textContent()).toContain('Its creator or someone with write');
      expect(await page.getByRole('button', { name: 'Declare dynamic secret' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Rotate DB_PASSWORD now' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: /^(Edit|Delete|Stop) / }).count()).toBe(0);
      await shot(page, 'credentials-read-only-1280');
      await page.setViewportSize({ width: 390, height: 844 });
      await shot(page, 'credentials-read-only-390');
      await page.setViewportSize({ width: 1280, height: 860 });
      await mine.getByRole('button', { name: `Revoke ${own.username}` }).click();
      await page.getByText(`${own.username} revoked`).waitFor();
      expect(await mariadbUserExists(own.username)).toBe(false);
      expect(await mariadbUserExists(others.username)).toBe(true);
      expect(problems).toEqual([]);
    } finally {
      await page.context().close();
      await api('DELETE', `/envs/dev/dynamic/app/leases/${others.id}`);
    }
  }, 60_000);

  it('lease Revoke buttons: none for a Member with read only, one per open lease for an Admin (D57)', async () => {
    // Two leases by the Owner: neither is the reader's, and read does not revoke; an Admin writes, so revokes.
    const made = [
      createdLease.parse((await api('POST', '/envs/dev/dynamic/app/leases', {})).body),
      createdLease.parse((await api('POST', '/envs/dev/dynamic/app/leases', {})).body),
    ];
    const rows = (page: Page) =>
      made.map((l) => page.locator(`[data-testid=lease-row][data-username="${l.username}"]`));
    const revokes = (page: Page) =>
      page.getByTestId('lease-row').getByRole('button', { name: /^(Retry revoke|Revoke) / });
    try {
      const r = await signedIn(reader.jwt, 390);
      try {
        await r.page.goto(`/projects/${projectId}?tab=credentials&env=dev`);
        for (const row of rows(r.page)) await row.waitFor();
        expect(await revokes(r.page).count()).toBe(0);
        for (const row of rows(r.page)) {
          expect(await row.getByTestId('revoke-explained').isVisible()).toBe(true);
        }
        await shot(r.page, 'credentials-revoke-hidden-390');
        expect(r.problems).toEqual([]);
      } finally {
        await r.context.close();
      }
      const a = await signedIn(admin.jwt, 390);
      try {
        await a.page.goto(`/projects/${projectId}?tab=credentials&env=dev`);
        for (const row of rows(a.page)) await row.waitFor();
        for (const [i, row] of rows(a.page).entries()) {
          const button = row.getByRole('button', { name: `Revoke ${made[i]!.username}` });
          expect(await button.isVisible()).toBe(true);
        }
        expect(await revokes(a.page).count()).toBe(await a.page.getByTestId('lease-row').count());
        expect(await a.page.getByTestId('revoke-explained').count()).toBe(0);
        await shot(a.page, 'credentials-revoke-shown-390');
        expect(a.problems).toEqual([]);
      } finally {
        await a.context.close();
      }
    } finally {
      for (const l of made) await api('DELETE', `/envs/dev/dynamic/app/leases/${l.id}`);
    }
  }, 60_000);

  it('"Who has access" on the Credentials tab: the D76 list for an Admin, nothing for a reader', async () => {
    // A D74 grant to show: Dev asks read on prod (protected: none for a Developer), the Owner approves.
    const ask = await api(
      'POST',
      '/access-requests',
      {
        env: 'prod',
        permission: 'read',
        durationSeconds: 3600,
        reason: 'Checking the leases',
      },
      dev.jwt,
    );
    expect(ask.status, ask.text).toBe(201);
    const requestId = (ask.body as { id: string }).id;
    const approve = await api('POST', `/access-requests/${requestId}/approve`, { durationSeconds: 3600 });
    expect(approve.status, approve.text).toBe(200);

    for (const width of [1280, 390]) {
      const a = await signedIn(admin.jwt, width);
      try {
        await a.page.goto(`/projects/${projectId}?tab=credentials&env=prod`);
        const heading = a.page.getByTestId('env-heading');
        await heading.getByText('Credentials in prod').waitFor();
        await heading.getByRole('button', { name: 'Who has access' }).click();
        const dlg = a.page.getByRole('dialog', { name: 'Who has access to prod' });
        const row = (name: string) => dlg.getByTestId('access-row').filter({ hasText: new RegExp(`^${name}`) });
        await row('Dev').waitFor();
        const source = (name: string) => row(name).locator('[data-source]').getAttribute('data-source');
        expect(await source('Olga')).toBe('owner');
        expect(await source('Ada')).toBe('role');
        expect(await source('Rey')).toBe('role');
        expect(await source('Dev')).toBe('request');
        expect(await row('Dev').textContent()).toContain(dev.email);
        expect(await row('Dev').locator('.pill').textContent()).toBe('read');
        expect(await row('Dev').getByTestId('time-left').textContent()).toMatch(/ends in (60 min|59 min|1 h)/);
        expect(await row('Ada').textContent()).toContain('standing');
        expect(await row('Dev').getByRole('link', { name: 'access request' }).getAttribute('href')).toBe(
          `/access-requests?request=${requestId}`,
        );
        await shot(a.page, `credentials-who-has-access-${width}`);
        if (width === 390) {
          expect(await a.page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
        }
        expect(a.problems).toEqual([]);
      } finally {
        await a.context.close();
      }
    }

    // A reader is not offered it, and the page never asks the list (no surprise 403).
    const r = await signedIn(reader.jwt);
    try {
      const asked: string[] = [];
      r.page.on('request', (q) => {
        if (/\/envs\/[^/]+\/access(\?|$)/.test(q.url())) asked.push(q.url());
      });
      await r.page.goto(`/projects/${projectId}?tab=credentials&env=prod`);
      await r.page.getByTestId('env-heading').getByText('Credentials in prod').waitFor();
      await r.page.getByTestId('credentials-read-only').waitFor();
      expect(await r.page.getByRole('button', { name: 'Who has access' }).count()).toBe(0);
      expect(asked).toEqual([]);
      expect(r.problems).toEqual([]);
    } finally {
      await r.context.close();
    }
  }, 60_000);

  it('rotates the root password behind a confirmation that says what it means', async () => {
    const { page, problems } = await signedIn(owner.jwt);
    try {
      await page.goto(`/projects/${projectId}?tab=connections`);
      await page.getByRole('button', { name: 'Rotate root password of maria', exact: true }).click();
      const dlg = page.getByRole('dialog', { name: 'Rotate the root password of maria?' });
      const words = (await dlg.textContent())!;
      expect(words).toContain('no person knows that password');
      expect(words).toContain('svcenv is the only thing that uses this user');
      await shot(page, 'connections-rotate-root-1280');
      await dlg.getByRole('button', { name: 'Rotate root password' }).click();
      await page.getByText('only svcenv knows it').first().waitFor();
      const row = page.locator('[data-testid=connection-row]', { hasText: 'maria-far' }).first();
      expect(await row.count()).toBe(1);
      const maria2 = connectionSchema.parse((await connections()).find((c) => c.name === 'maria'));
      expect(maria2.rootRotatedAt).not.toBeNull();
      // The password typed in is no more; svcenv still logs in with its own.
      expect(await mariadbCanLogin(maria.username, maria.password)).toBe(false);
      const test = await api('POST', '/connections/maria/test', {});
      expect(test.body).toMatchObject({ ok: true });
      expect(problems).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 60_000);

  it('declares a dynamic secret and binds a rotation from the dashboard (write permission)', async () => {
    const name = `svcenv_t_web_${randomBytes(3).toString('hex')}`;
    const first = `init${randomBytes(8).toString('hex')}`;
    await mariadbRoot((c) => c.query(`CREATE USER '${name}'@'%' IDENTIFIED BY '${first}'`));
    dbUsers.push(name);
    await upsert(server, owner.jwt, projectId, ['dev'], [{ key: 'REPORTS_PASSWORD', value: first, type: 'secret' }]);
    const { page, problems } = await signedIn(owner.jwt);
    try {
      await page.goto(`/projects/${projectId}?tab=credentials&env=dev`);
      await page.getByRole('button', { name: 'Declare dynamic secret' }).click();
      const dlg = page.getByRole('dialog', { name: 'Declare a dynamic secret in dev' });
      await dlg.locator('[name=name]').fill('reports');
      await dlg.locator('select[name=connection]').selectOption('maria');
      await dlg
        .locator('[name=create]')
        .fill(
          `CREATE USER '{{username}}'@'%'\n  IDENTIFIED BY '{{password}}';\nGRANT USAGE ON *.* TO '{{username}}'@'%';`,
        );
      await dlg.locator('[name=defaultTtlSeconds]').fill('600');
      await dlg.getByRole('button', { name: 'Declare' }).click();
      await page.getByText('Dynamic secret reports saved').waitFor();
      const card = page.locator('[data-testid=dynamic-secret][data-name=reports]');
      await expect.poll(() => card.textContent()).toContain('10 min');
      // What the form sent is what a lease runs: the user logs in.
      const lease = createdLease.parse((await api('POST', '/envs/dev/dynamic/reports/leases', {})).body);
      expect(await mariadbCanLogin(lease.username, lease.values.REPORTS_PASSWORD!)).toBe(true);

      await page.getByRole('button', { name: 'Rotate a variable' }).click();
      const rot = page.getByRole('dialog', { name: 'Rotate a variable of dev' });
      await rot.locator('[name=key]').fill('REPORTS_PASSWORD');
      await rot.locator('select[name=connection]').selectOption('maria');
      await rot.locator('[name=username]').fill(name);
      await rot.locator('[name=intervalSeconds]').fill('100');
      await rot.getByRole('button', { name: 'Save' }).click();
      // The server's bound, beside its field.
      await rot.locator('.field-invalid').first().waitFor();
      await rot.locator('[name=intervalSeconds]').fill('');
      await rot.getByRole('button', { name: 'Save' }).click();
      await page.getByText('REPORTS_PASSWORD rotates with maria').waitFor();
      const row = page.locator('[data-testid=rotation-row]', { hasText: 'REPORTS_PASSWORD' });
      await expect.poll(() => row.textContent()).toContain('on demand');

      // Deleting the dynamic secret revokes its lease first.
      await card.getByRole('button', { name: 'Delete reports' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke leases and delete' }).click();
      await expect.poll(() => card.count()).toBe(0);
      expect(await mariadbUserExists(lease.username)).toBe(false);
      expect(problems).toEqual([]);
    } finally {
      await page.context().close();
    }
  }, 60_000);

  it('every new screen at 1280 and 390 px', async () => {
    for (const width of [1280, 390]) {
      const { page, problems } = await signedIn(owner.jwt, width);
      try {
        await page.goto(`/projects/${projectId}?tab=connections`);
        await page.getByTestId('connection-row').first().waitFor();
        await shot(page, `connections-${width}`);
        await page.getByRole('button', { name: 'Add connection' }).first().click();
        await shot(page, `connections-add-${width}`);
        await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
        await page.getByRole('button', { name: 'Test maria', exact: true }).click();
        await page.getByRole('dialog').getByRole('button', { name: 'Run the test' }).click();
        await page.getByTestId('connection-test').waitFor();
        await shot(page, `connections-test-${width}`);
        await page.getByRole('dialog').getByRole('button', { name: 'Close' }).first().click();
        await page.getByRole('button', { name: 'Rotate root password of maria', exact: true }).click();
        await shot(page, `connections-rotate-root-${width}`);
        await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
        // In use: the dialog says what to remove first rather than offering a delete the server refuses (409).
        await page.getByRole('button', { name: 'Delete maria', exact: true }).click();
        const inUse = page.getByTestId('connection-in-use');
        await expect.poll(() => inUse.textContent()).toMatch(/use this connection\. Delete them/);
        await shot(page, `connections-in-use-${width}`);
        await page.getByRole('dialog').getByRole('button', { name: 'Close' }).last().click();

        await page.goto(`/projects/${projectId}?tab=credentials&env=dev`);
        await page.getByTestId('dynamic-secret').first().waitFor();
        await page.locator('[data-testid=dynamic-secret][data-name=flaky]').getByLabel('Show ended').check();
        await page.getByTestId('lease-row').first().waitFor();
        await shot(page, `credentials-${width}`);
        await page.getByRole('button', { name: 'Declare dynamic secret' }).click();
        await shot(page, `credentials-declare-${width}`);
        await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
        await page.getByRole('button', { name: 'Rotate a variable' }).click();
        await shot(page, `credentials-rotation-form-${width}`);
        await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
        expect(problems).toEqual([]);
      } finally {
        await page.context().close();
      }
    }
  }, 90_000);
});
