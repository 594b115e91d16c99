/**
 * What fault and attack tests found, each checked over HTTP on the real server, on SQLite and on
 * PostgreSQL: bad input is a 400 in our shape and changes nothing, nothing a client pastes is echoed or
 * logged, and the webhook guard refuses link-local targets in every configuration.
 */

import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createWebhookResponse,
  historyResponse,
  listVarsResponse,
  sessionResponse,
  switchWorkspaceResponse,
} from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTrustedProxy, loadConfig, proxyList } from '../src/config.js';
import { migrate, openDb } from '../src/db/index.js';
import { seal, valueAad } from '../src/lib/crypto.js';
import { bindLegacyValues } from '../src/services/variables/value-binding.js';
import {
  createProject,
  createToken,
  dialectName,
  rawConnection,
  signupUser,
  startApp,
  startServer,
  type TestApp,
  upsert,
} from './harness.js';

const SECURITY = ['x-content-type-options: nosniff', 'x-frame-options: DENY', 'cache-control: no-store'];

/** The status line, lower-cased headers and parsed JSON body of a raw HTTP answer. */
function parseRaw(raw: string) {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).toLowerCase();
  return { status: Number(raw.slice(9, 12)), head, body: JSON.parse(raw.slice(split + 4)) };
}

describe(`hardening (${dialectName})`, () => {
  let app: TestApp;
  let jwt: string;

  beforeAll(async () => {
    app = await startApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    ({ jwt } = await signupUser(app));
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('refuses a NUL character in any text field with 400 VALIDATION naming the field, before any work', async () => {
    const nul = 'a\u0000b';
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['POST', '/v1/auth/login', { email: `${nul}@example.test`, password: 'whatever-123' }, 'email'],
      ['POST', '/v1/auth/signup', { name: nul, email: 'nul@example.test', password: 'whatever-123' }, 'name'],
      ['PATCH', '/v1/me', { name: nul }, 'name'],
      ['POST', '/v1/projects', { name: nul }, 'name'],
      ['POST', '/v1/projects', { name: 'ok', desc: nul }, 'desc'],
      ['PATCH', '/v1/workspace', { name: nul }, 'name'],
      ['POST', '/v1/tokens', { name: nul, envs: ['*'] }, 'name'],
      ['POST', '/v1/workspace/webhooks', { name: nul, url: 'http://127.0.0.1:9/x', events: ['var.update'] }, 'name'],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await app.request(method, path, { token: jwt, body });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.error, `${method} ${path}`).toEqual({
        code: 'VALIDATION',
        message: 'text may not contain a NUL character',
        field,
      });
    }
    // Deeper paths are named too, and nothing was created.
    const p = await createProject(app, jwt);
    const bulk = await app.request('POST', `/v1/projects/${p.id}/vars`, {
      token: jwt,
      body: {
        envs: ['dev'],
        items: [
          { key: 'OK', value: 'fine' },
          { key: 'BAD', value: nul },
        ],
      },
    });
    expect(bulk.error).toMatchObject({ code: 'VALIDATION', field: 'items.1.value' });
    // A key that is a pasted credential is not echoed as the field's name.
    const pasted = 'ghp_R4nd0mL00k1ngT0kenV4lue123';
    const keyed = await app.request('PATCH', '/v1/me', { token: jwt, body: { [pasted]: nul } });
    expect(keyed.status).toBe(400);
    expect(keyed.error).toMatchObject({ code: 'VALIDATION', field: '(unknown)' });
    expect(keyed.text).not.toContain(pasted);
    const vars = await app.request('GET', `/v1/projects/${p.id}/envs/dev/vars`, { token: jwt });
    expect(vars.text).toBe('{"vars":[]}');
    const projects = await app.request('GET', '/v1/projects', { token: jwt });
    expect(projects.text).not.toContain('\\u0000');
  });

  it('answers a request without Host, and an unmet Expect, in our error shape with the security headers', async () => {
    const noHost = rawConnection(app.url);
    noHost.write('GET /healthz HTTP/1.1\r\nconnection: close\r\n\r\n');
    await noHost.closed;
    const a = parseRaw(noHost.text());
    expect(a.status).toBe(400);
    for (const h of SECURITY) expect(a.head).toContain(h.toLowerCase());
    expect(a.body).toEqual({ error: { code: 'VALIDATION', message: 'the Host header is required', field: 'host' } });

    const teapot = rawConnection(app.url);
    teapot.write('POST /v1/auth/login HTTP/1.1\r\nhost: x\r\nexpect: teapot\r\ncontent-length: 2\r\n\r\n{}');
    await teapot.closed;
    const b = parseRaw(teapot.text());
    expect(b.status).toBe(417);
    for (const h of SECURITY) expect(b.head).toContain(h.toLowerCase());
    expect(b.body).toEqual({
      error: { code: 'VALIDATION', message: 'only "Expect: 100-continue" is supported', field: 'expect' },
    });
  });

  it('never echoes a credential-shaped unknown field, nor logs a credential-shaped path segment', async () => {
    const pasted = ['ghp_', 'R4nd0mLooking', 'Secret1234567890abcdef'].join('');
    const ours = ['tok_live_', 'AbCdEf0123456789', 'AbCdEf0123456789', 'xYz012'].join('');
    for (const key of [pasted, ours, 'Ab3dEf9hIjKlMnOpQrStUv12']) {
      const res = await app.request('POST', '/v1/projects', { token: jwt, body: { name: 'x', [key]: 1 } });
      expect(res.status).toBe(400);
      expect(res.text).not.toContain(key);
      expect(res.error.message).toBe('(unknown): unknown field "(unknown)"');
    }
    // An ordinary misspelt field is still named, so the error stays useful.
    const typo = await app.request('POST', '/v1/projects', { token: jwt, body: { name: 'x', colour: '#fff' } });
    expect(typo.error).toMatchObject({ field: 'colour', message: 'colour: unknown field "colour"' });

    // Twice each: the log keeps a memo of paths it found clean (lib/redact.ts); a credential's never joins it.
    for (let i = 0; i < 2; i++) {
      await app.request('GET', `/v1/projects/${ours}/envs/dev/vars`, { token: jwt });
      await app.request('GET', `/v1/nowhere/${pasted}`);
    }
    const logs = app.logs();
    expect(logs.split('[redacted]').length - 1).toBeGreaterThanOrEqual(4);
    expect(logs).not.toContain(ours);
    expect(logs).not.toContain(pasted);
  });

  it('refuses link-local and cloud metadata webhook targets even with WEBHOOK_ALLOW_PRIVATE=true', async () => {
    for (const host of [
      '169.254.169.254',
      '[::ffff:169.254.169.254]',
      '[::ffff:a9fe:a9fe]',
      '[64:ff9b::a9fe:a9fe]',
      '[fe80::1]',
      '[fd00:ec2::254]',
    ]) {
      const res = await app.request('POST', '/v1/workspace/webhooks', {
        token: jwt,
        body: { name: 'meta', url: `http://${host}/latest/meta-data`, events: ['var.update'] },
      });
      expect(res.status, host).toBe(400);
      expect(res.error, host).toMatchObject({ code: 'VALIDATION', field: 'url' });
      expect(res.error.message, host).toContain('link-local');
    }
    // A private receiver stays allowed with the setting on.
    const ok = await app.request('POST', '/v1/workspace/webhooks', {
      token: jwt,
      body: { name: 'lan', url: 'http://127.0.0.1:9/hook', events: ['var.update'] },
      schema: createWebhookResponse,
    });
    expect(ok.status).toBe(201);
  });

  it('creates a token for a project being deleted, or refuses it 404: never a 500', async () => {
    const statuses = new Set<number>();
    for (let round = 0; round < 15; round++) {
      const p = await createProject(app, jwt);
      const answers = await Promise.all([
        ...[0, 1, 2].map(() =>
          app.request('POST', '/v1/tokens', { token: jwt, body: { name: 't', envs: ['*'], projectId: p.id } }),
        ),
        app.request('DELETE', `/v1/projects/${p.id}`, { token: jwt }),
        ...[0, 1].map(() =>
          app.request('POST', '/v1/tokens', { token: jwt, body: { name: 't', envs: ['*'], projectId: p.id } }),
        ),
      ]);
      for (const a of answers) {
        statuses.add(a.status);
        expect([201, 204, 404], a.text).toContain(a.status);
        if (a.status === 404) expect(a.error.code).toBe('NOT_FOUND');
      }
    }
    expect(statuses).toContain(204);
  });
});

describe(`an undecryptable value (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('is marked in the listing, fails pull and export with DECRYPT_FAILED naming the key, and can be repaired', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const token = (await createToken(app, jwt, { scope: 'write', projectId: p.id })).token;
    const viaRef = 'postgres://app:${DB_PASSWORD}@db';
    await upsert(
      app,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'DB_PASSWORD', value: 'correct-horse-battery', type: 'secret' },
        { key: 'DATABASE_URL', value: viaRef, type: 'plain' },
        { key: 'PORT', value: '8080', type: 'plain' },
      ],
    );
    // Someone with write access to the database copies another row's ciphertext over DB_PASSWORD's.
    const { db } = app.db;
    const port = await db
      .selectFrom('variables')
      .select('value_sealed')
      .where('key', '=', 'PORT')
      .executeTakeFirstOrThrow();
    await db
      .updateTable('variables')
      .set({ value_sealed: port.value_sealed })
      .where('key', '=', 'DB_PASSWORD')
      .execute();

    const base = `/v1/projects/${p.id}/envs/dev`;
    const list = await app.request('GET', `${base}/vars?reveal=true`, { token: jwt, schema: listVarsResponse });
    expect(list.status).toBe(200);
    const byKey = Object.fromEntries(list.body.vars.map((v) => [v.key, v]));
    expect(list.body.vars.map((v) => v.key)).toEqual(['DATABASE_URL', 'DB_PASSWORD', 'PORT']);
    expect(byKey.DB_PASSWORD).toMatchObject({ value: '', valueError: 'DECRYPT_FAILED', type: 'secret' });
    expect(byKey.DATABASE_URL?.resolveError).toContain('DB_PASSWORD');
    expect(byKey.DATABASE_URL?.resolvedValue).toBeUndefined();
    expect(byKey.PORT).toMatchObject({ value: '8080' });
    expect(list.text).not.toContain('8080@');

    for (const path of [`${base}/pull`, `${base}/export`]) {
      const res = await app.request('GET', path, { token });
      expect(res.status, path).toBe(500);
      expect(res.error, path).toEqual({ code: 'DECRYPT_FAILED', message: expect.any(String), field: 'DB_PASSWORD' });
      expect(res.text).not.toContain('8080');
    }
    expect(app.logs()).toContain('"code":"DECRYPT_FAILED"');

    // An admin repairs it by setting the value again.
    const put = await app.request('PUT', `${base}/vars/DB_PASSWORD`, {
      token: jwt,
      body: { value: 'new-horse-battery' },
    });
    expect(put.status).toBe(200);
    const pulled = await app.request('GET', `${base}/pull?metadata=false`, { token });
    expect(pulled.status).toBe(200);
    expect(pulled.text).toContain('DATABASE_URL=postgres://app:new-horse-battery@db');
  });
});

describe(`sealed values are bound to their role (${dialectName})`, () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('refuses a history ciphertext copied into the variable: the old value is never served', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const base = `/v1/projects/${p.id}/envs/dev`;
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'API_KEY', value: 'old-leaked-key', type: 'secret' }]);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'API_KEY', value: 'new-rotated-key', type: 'secret' }]);
    const { db } = app.db;
    const env = await db
      .selectFrom('environments')
      .select('id')
      .where('project_id', '=', p.id)
      .where('name', '=', 'dev')
      .executeTakeFirstOrThrow();
    const oldest = await db
      .selectFrom('variable_history')
      .select('value_sealed')
      .where('environment_id', '=', env.id)
      .where('key', '=', 'API_KEY')
      .orderBy('id')
      .executeTakeFirstOrThrow();
    await db
      .updateTable('variables')
      .set({ value_sealed: oldest.value_sealed })
      .where('environment_id', '=', env.id)
      .where('key', '=', 'API_KEY')
      .execute();
    const list = await app.request('GET', `${base}/vars?reveal=true`, { token: jwt, schema: listVarsResponse });
    expect(list.body.vars[0]).toMatchObject({ key: 'API_KEY', value: '', valueError: 'DECRYPT_FAILED' });
    expect(list.text).not.toContain('old-leaked-key');
    // The history itself still reads, and restoring from it is the way back.
    const history = await app.request('GET', `${base}/vars/API_KEY/history?reveal=true`, {
      token: jwt,
      schema: historyResponse,
    });
    expect(history.body.history.map((h) => h.value)).toEqual(['new-rotated-key', 'old-leaked-key']);
    const restored = await app.request('POST', `${base}/vars/API_KEY/restore`, {
      token: jwt,
      body: { versionId: history.body.history[0]!.id },
    });
    expect(restored.status).toBe(200);
    const again = await app.request('GET', `${base}/vars?reveal=true`, { token: jwt, schema: listVarsResponse });
    expect(again.body.vars[0]).toMatchObject({ key: 'API_KEY', value: 'new-rotated-key' });
  });

  it('re-seals values written before roles were bound, once, at start-up', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'LEGACY', value: 'placeholder', type: 'secret' }]);
    const { db } = app.db;
    const row = await db
      .selectFrom('variables as v')
      .innerJoin('environments as e', 'e.id', 'v.environment_id')
      .innerJoin('projects as pr', 'pr.id', 'e.project_id')
      .select(['v.environment_id', 'pr.wrapped_key'])
      .where('pr.id', '=', p.id)
      .where('v.key', '=', 'LEGACY')
      .executeTakeFirstOrThrow();
    // As an earlier version wrote them: the same AAD for the variable and its history, `v1.`.
    const key = app.deps.keyring.key(p.id, row.wrapped_key);
    const legacy = seal(key, Buffer.from('legacy-value'), valueAad(p.id, row.environment_id, 'LEGACY'));
    expect(legacy.startsWith('v1.')).toBe(true);
    await db.updateTable('variables').set({ value_sealed: legacy }).where('key', '=', 'LEGACY').execute();
    await db.updateTable('variable_history').set({ value_sealed: legacy }).where('key', '=', 'LEGACY').execute();
    const before = await app.request('GET', `/v1/projects/${p.id}/envs/dev/vars?reveal=true`, {
      token: jwt,
      schema: listVarsResponse,
    });
    expect(before.body.vars[0]).toMatchObject({ valueError: 'DECRYPT_FAILED' });

    expect(await bindLegacyValues(app.deps)).toBeGreaterThanOrEqual(2);
    expect(await bindLegacyValues(app.deps)).toBe(0);
    const after = await app.request('GET', `/v1/projects/${p.id}/envs/dev/vars?reveal=true`, {
      token: jwt,
      schema: listVarsResponse,
    });
    expect(after.body.vars[0]).toMatchObject({ key: 'LEGACY', value: 'legacy-value' });
    const history = await app.request('GET', `/v1/projects/${p.id}/envs/dev/vars/LEGACY/history?reveal=true`, {
      token: jwt,
      schema: historyResponse,
    });
    expect(history.body.history[0]?.value).toBe('legacy-value');
    const stored = await db
      .selectFrom('variables')
      .select('value_sealed')
      .where('key', '=', 'LEGACY')
      .executeTakeFirstOrThrow();
    expect(stored.value_sealed.startsWith('v2.')).toBe(true);
  });
});

describe.skipIf(dialectName !== 'sqlite')('files in DATA_DIR', () => {
  it('are 0600: the database and its WAL files, created new or left 0644 by an older version', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-modes-'));
    try {
      const fresh = openDb({ dataDir });
      await migrate(fresh);
      const files = readdirSync(dataDir).filter((f) => f.startsWith('svcenv.db'));
      expect(files).toEqual(expect.arrayContaining(['svcenv.db', 'svcenv.db-wal']));
      for (const f of files) expect(statSync(join(dataDir, f)).mode & 0o777, f).toBe(0o600);
      await fresh.close();
      for (const f of readdirSync(dataDir)) chmodSync(join(dataDir, f), 0o644);
      const reopened = openDb({ dataDir });
      for (const f of readdirSync(dataDir).filter((n) => n.startsWith('svcenv.db'))) {
        expect(statSync(join(dataDir, f)).mode & 0o777, f).toBe(0o600);
      }
      await reopened.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('draining after SIGTERM (the server process)', () => {
  it('answers requests on kept-alive connections 503 with Connection: close, and /readyz 503 (D52)', async () => {
    const srv = await startServer({ env: { DRAIN_GRACE_MS: '3000' } });
    const ready = await srv.request('GET', '/readyz');
    expect([ready.status, ready.text]).toEqual([200, '{"ready":true}']);
    const socket = rawConnection(srv.url);
    socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
    await until(() => socket.text().includes('{"ok":true}'));
    const code = srv.stop('SIGTERM');
    await until(() => srv.logs().includes('shutting down'));
    // The same keep-alive connection, used again during the drain: an answer, not a reset.
    socket.write('GET /v1/projects HTTP/1.1\r\nhost: x\r\n\r\n');
    await socket.closed;
    const late = socket.text().slice(socket.text().indexOf('HTTP/1.1 503'));
    expect(late).toMatch(/^HTTP\/1\.1 503 /);
    expect(late.toLowerCase()).toContain('connection: close');
    expect(late.toLowerCase()).toContain('x-content-type-options: nosniff');
    expect(parseRaw(late).body).toMatchObject({ error: { code: 'SERVER' } });
    const notReady = await fetch(`${srv.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toMatchObject({ error: { code: 'SERVER', field: '' } });
    expect(await code).toBe(0);
  });
});

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('TRUSTED_PROXIES (D4, D14)', () => {
  it('takes addresses and CIDR ranges, refuses anything else, and only with TRUST_PROXY', () => {
    const list = proxyList('127.0.0.1, 10.0.0.0/8,fd00::/8');
    expect(['127.0.0.1', '::ffff:127.0.0.1', '10.1.2.3', 'fd00::1'].map((a) => isTrustedProxy(list, a))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['127.0.0.2', '11.0.0.1', 'fe80::1'].map((a) => isTrustedProxy(list, a))).toEqual([false, false, false]);
    expect(() => loadConfig({ TRUST_PROXY: 'true', TRUSTED_PROXIES: 'proxy.example' })).toThrow(/TRUSTED_PROXIES/);
    expect(() => loadConfig({ TRUST_PROXY: 'true', TRUSTED_PROXIES: '10.0.0.0/33' })).toThrow(/bad prefix/);
    expect(() => loadConfig({ TRUSTED_PROXIES: '127.0.0.1' })).toThrow(/only with TRUST_PROXY/);
  });
});

describe(`sessions of a removed member (${dialectName})`, () => {
  let now = Date.parse('2026-11-25T10:00:00Z');
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ clock: { now: () => new Date(now) } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('ends with the membership: adding the person back does not revive the sessions of the first one', async () => {
    const owner = await signupUser(app, 'Olga');
    const member = await signupUser(app, 'Pavel');
    const wsId = (await app.request('GET', '/v1/auth/session', { token: owner.jwt, schema: sessionResponse })).body.user
      .workspaceId;
    const add = () =>
      app.request('POST', '/v1/workspace/invites', {
        token: owner.jwt,
        body: { email: member.email, wsRole: 'Member' },
      });
    const switchTo = async () =>
      (
        await app.request('POST', '/v1/auth/switch-workspace', {
          token: member.jwt,
          body: { workspaceId: wsId },
          schema: switchWorkspaceResponse,
        })
      ).body.token;
    expect((await add()).status).toBe(200);
    const first = await switchTo();
    expect((await app.request('GET', '/v1/workspace', { token: first })).status).toBe(200);
    expect((await app.request('DELETE', `/v1/workspace/members/${member.user.id}`, { token: owner.jwt })).status).toBe(
      204,
    );
    expect((await app.request('GET', '/v1/workspace', { token: first })).status).toBe(401);
    now += 60_000;
    expect((await add()).status).toBe(200);
    // The old session stays dead; a new one, issued in the new membership, works.
    expect((await app.request('GET', '/v1/workspace', { token: first })).status).toBe(401);
    const second = await switchTo();
    expect((await app.request('GET', '/v1/workspace', { token: second })).status).toBe(200);
    // The member's own workspace was never left: its session lives on.
    expect((await app.request('GET', '/v1/me', { token: member.jwt })).status).toBe(200);
  });
});
