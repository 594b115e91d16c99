/**
 * D72 rotation of a stored credential over HTTP, on SQLite and PostgreSQL as svcenv's store, against MariaDB
 * (which checks passwords): `single` and `alternate`, the revision each rotation makes (history, audit and
 * webhook without the value, held pulls woken), a database change that fails, and the schedule on an
 * injected clock.
 */
import { randomBytes } from 'node:crypto';
import {
  auditPage,
  historyResponse,
  listVarsResponse,
  revisionsResponse,
  rotation as rotationSchema,
} from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import {
  createProject,
  createToken,
  dialectName,
  signupUser,
  startApp,
  type TestApp,
  until,
  upsert,
} from './harness.js';
import { MARIADB, mariadbAdmin, mariadbCanLogin, mariadbRoot, startRelay } from './managed-dbs.js';
import { type Receiver, startReceiver } from './receiver.js';

describe(`rotations (D72, ${dialectName})`, () => {
  let app: TestApp;
  let receiver: Receiver;
  let maria: Awaited<ReturnType<typeof mariadbAdmin>>;
  let jwt: string;
  let projectId: string;
  const clock = new ManualClock(new Date());
  const users: string[] = [];

  /** A MariaDB user of the test's own with a known password. */
  async function dbUser(): Promise<{ name: string; password: string }> {
    const name = `svcenv_t_rot_${randomBytes(3).toString('hex')}`;
    const password = `init${randomBytes(8).toString('hex')}`;
    await mariadbRoot((c) => c.query(`CREATE USER '${name}'@'%' IDENTIFIED BY '${password}'`));
    users.push(name);
    return { name, password };
  }

  beforeAll(async () => {
    receiver = await startReceiver();
    app = await startApp({
      clock,
      env: { DEFAULT_PLAN: 'enterprise', CONNECTIONS_TIMEOUT_MS: '1000', WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    maria = await mariadbAdmin();
    const o = await signupUser(app, 'Rita');
    jwt = o.jwt;
    projectId = (await createProject(app, jwt, { name: `rot-${dialectName}` })).id;
    const conn = await app.request('POST', `/v1/projects/${projectId}/connections`, {
      token: jwt,
      body: {
        name: 'maria',
        kind: 'mysql',
        host: '127.0.0.1',
        username: maria.username,
        password: maria.password,
        tls: { mode: 'disable' },
      },
    });
    expect(conn.status, conn.text).toBe(201);
    const hook = await app.request('POST', '/v1/workspace/webhooks', {
      token: jwt,
      body: { name: 'rot', url: receiver.url(), events: ['var.rotate'] },
    });
    expect(hook.status, hook.text).toBe(201);
  });

  afterAll(async () => {
    await app?.stop();
    await receiver?.stop();
    await mariadbRoot(async (c) => {
      for (const u of users) await c.query(`DROP USER IF EXISTS '${u}'@'%'`);
    });
    await maria?.drop();
  });

  const path = (rest: string) => `/v1/projects/${projectId}/envs/dev${rest}`;
  const value = async (key: string) => {
    const res = await app.request('GET', path('/vars?reveal=true'), { token: jwt });
    return listVarsResponse.parse(res.body).vars.find((v) => v.key === key)?.value;
  };

  it("refuses what it cannot rotate: a plain variable, the connection's own user, an interval under 300 s", async () => {
    await upsert(app, jwt, projectId, ['dev'], [{ key: 'PLAIN_ONE', value: 'x', type: 'plain' }]);
    const plain = await app.request('PUT', path('/rotations/PLAIN_ONE'), {
      token: jwt,
      body: { connection: 'maria', username: 'someone', intervalSeconds: null },
    });
    expect(plain.status).toBe(400);
    expect(plain.error.field).toBe('key');
    const own = await app.request('PUT', path('/rotations/OWN'), {
      token: jwt,
      body: { connection: 'maria', username: maria.username, intervalSeconds: null },
    });
    expect(own.status).toBe(400);
    expect(own.error.field).toBe('username');
    const short = await app.request('PUT', path('/rotations/SHORT'), {
      token: jwt,
      body: { connection: 'maria', username: 'u', intervalSeconds: 299 },
    });
    expect(short.status).toBe(400);
    const both = await app.request('PUT', path('/rotations/BOTH'), {
      token: jwt,
      body: { connection: 'maria', strategy: 'alternate', username: 'u', intervalSeconds: null },
    });
    expect(both.status).toBe(400);
  });

  it('single: a rotation changes the password in the database and writes it as a new revision, waking held pulls', async () => {
    const u = await dbUser();
    await upsert(app, jwt, projectId, ['dev'], [{ key: 'DB_PASSWORD', value: u.password, type: 'secret' }]);
    const bind = await app.request('PUT', path('/rotations/DB_PASSWORD'), {
      token: jwt,
      body: { connection: 'maria', username: u.name, intervalSeconds: 3600 },
    });
    expect(bind.status, bind.text).toBe(200);
    expect(rotationSchema.parse(bind.body)).toMatchObject({
      key: 'DB_PASSWORD',
      username: u.name,
      strategy: 'single',
      lastRotatedAt: null,
      lastError: null,
    });
    // A held pull (D43) of a token waits on the environment's revision.
    const { token } = await createToken(app, jwt, { scope: 'read', envs: ['dev'] });
    const first = await app.request('GET', path('/pull'), { token });
    const etag = first.headers.get('etag')!;
    const held = app.request('GET', path('/pull?wait=20'), { token, headers: { 'if-none-match': etag } });
    const rotated = await app.request('POST', path('/rotations/DB_PASSWORD/rotate'), { token: jwt, body: {} });
    expect(rotated.status, rotated.text).toBe(200);
    const woke = await held;
    expect(woke.status).toBe(200);
    const now = (await value('DB_PASSWORD'))!;
    expect(now).not.toBe(u.password);
    expect(woke.text).toContain(`DB_PASSWORD=${now}`);
    expect(await mariadbCanLogin(u.name, now)).toBe(true);
    expect(await mariadbCanLogin(u.name, u.password)).toBe(false);
    const r = rotationSchema.parse(rotated.body);
    expect(r.lastRotatedAt).not.toBeNull();
    expect(Date.parse(r.nextRotationAt!) - Date.parse(r.lastRotatedAt!)).toBe(3_600_000);
    const revisions = revisionsResponse.parse((await app.request('GET', path('/revisions'), { token: jwt })).body);
    expect(revisions.revisions[0]).toMatchObject({ action: 'var.rotate', updated: ['DB_PASSWORD'] });
    const history = historyResponse.parse(
      (await app.request('GET', path('/vars/DB_PASSWORD/history'), { token: jwt })).body,
    );
    expect(history.history).toHaveLength(2);
    const audit = await app.request('GET', `/v1/projects/${projectId}/audit?action=var.rotate`, {
      token: jwt,
      schema: auditPage,
    });
    expect(audit.body.logs[0]).toMatchObject({ action: 'var.rotate', targetKey: 'DB_PASSWORD' });
    expect(audit.text).not.toContain(now);
    await until('the var.rotate webhook', () => receiver.received.some((x) => x.body.event === 'var.rotate'));
    expect(receiver.received.map((x) => x.raw.toString()).join('')).not.toContain(now);
    expect(app.logs()).not.toContain(now);
  });

  it('alternate: each rotation changes the user not in use and points the variable and <KEY>_USERNAME at it', async () => {
    const a = await dbUser();
    const b = await dbUser();
    await upsert(
      app,
      jwt,
      projectId,
      ['dev'],
      [
        { key: 'ALT_PASSWORD', value: a.password, type: 'secret' },
        { key: 'ALT_PASSWORD_USERNAME', value: a.name, type: 'plain' },
      ],
    );
    const bind = await app.request('PUT', path('/rotations/ALT_PASSWORD'), {
      token: jwt,
      body: { connection: 'maria', strategy: 'alternate', usernames: [a.name, b.name], intervalSeconds: null },
    });
    expect(bind.status, bind.text).toBe(200);
    expect(rotationSchema.parse(bind.body)).toMatchObject({ username: a.name, usernames: [a.name, b.name] });
    const one = rotationSchema.parse(
      (await app.request('POST', path('/rotations/ALT_PASSWORD/rotate'), { token: jwt, body: {} })).body,
    );
    expect(one.username).toBe(b.name);
    const pw1 = (await value('ALT_PASSWORD'))!;
    expect(await value('ALT_PASSWORD_USERNAME')).toBe(b.name);
    expect(await mariadbCanLogin(b.name, pw1)).toBe(true);
    // Connections opened with the previous credentials keep working for one more interval.
    expect(await mariadbCanLogin(a.name, a.password)).toBe(true);
    const two = rotationSchema.parse(
      (await app.request('POST', path('/rotations/ALT_PASSWORD/rotate'), { token: jwt, body: {} })).body,
    );
    expect(two.username).toBe(a.name);
    const pw2 = (await value('ALT_PASSWORD'))!;
    expect(await value('ALT_PASSWORD_USERNAME')).toBe(a.name);
    expect(await mariadbCanLogin(a.name, pw2)).toBe(true);
    expect(await mariadbCanLogin(a.name, a.password)).toBe(false);
    expect(await mariadbCanLogin(b.name, pw1)).toBe(true);
  });

  it('a database change that fails keeps the old value, shows lastError, and answers 502', async () => {
    const relay = await startRelay(MARIADB);
    await app.request('POST', `/v1/projects/${projectId}/connections`, {
      token: jwt,
      body: {
        name: 'maria-relay',
        kind: 'mysql',
        host: '127.0.0.1',
        port: relay.port,
        username: maria.username,
        password: maria.password,
        tls: { mode: 'disable' },
      },
    });
    const u = await dbUser();
    await upsert(app, jwt, projectId, ['dev'], [{ key: 'AWAY_PASSWORD', value: u.password, type: 'secret' }]);
    await app.request('PUT', path('/rotations/AWAY_PASSWORD'), {
      token: jwt,
      body: { connection: 'maria-relay', username: u.name, intervalSeconds: null },
    });
    await relay.down();
    const res = await app.request('POST', path('/rotations/AWAY_PASSWORD/rotate'), { token: jwt, body: {} });
    expect(res.status).toBe(502);
    expect(res.error.code).toBe('UPSTREAM_FAILED');
    expect(await value('AWAY_PASSWORD')).toBe(u.password);
    expect(await mariadbCanLogin(u.name, u.password)).toBe(true);
    const list = await app.request('GET', path('/rotations'), { token: jwt });
    const away = (list.body as { rotations: { key: string; lastError: string | null }[] }).rotations.find(
      (r) => r.key === 'AWAY_PASSWORD',
    );
    expect(away?.lastError).toBeTruthy();
    // Once the database is back, asking again succeeds (the pending password is the one set).
    await relay.up();
    const again = await app.request('POST', path('/rotations/AWAY_PASSWORD/rotate'), { token: jwt, body: {} });
    expect(again.status, again.text).toBe(200);
    expect(await mariadbCanLogin(u.name, (await value('AWAY_PASSWORD'))!)).toBe(true);
    await relay.stop();
  });

  it('rotates on its schedule (an injected clock moves past the interval)', async () => {
    const u = await dbUser();
    await upsert(app, jwt, projectId, ['dev'], [{ key: 'TIMED_PASSWORD', value: u.password, type: 'secret' }]);
    const bind = await app.request('PUT', path('/rotations/TIMED_PASSWORD'), {
      token: jwt,
      body: { connection: 'maria', username: u.name, intervalSeconds: 300 },
    });
    expect(bind.status).toBe(200);
    clock.advance(301_000);
    await until('the scheduled rotation', async () => (await value('TIMED_PASSWORD')) !== u.password, 20_000);
    expect(await mariadbCanLogin(u.name, (await value('TIMED_PASSWORD'))!)).toBe(true);
    const audit = await app.request('GET', `/v1/projects/${projectId}/audit?action=var.rotate`, {
      token: jwt,
      schema: auditPage,
    });
    expect(audit.body.logs[0]).toMatchObject({
      targetKey: 'TIMED_PASSWORD',
      detail: expect.objectContaining({ scheduled: true }),
    });
  }, 30_000);
});
