/**
 * D71 and D72 across crashes: the real server as a child process killed with SIGKILL at a failpoint
 * (lib/failpoints.ts) between a lease's create statements and its record, and between a rotation's database
 * change and its revision; after a restart nothing is orphaned and no password is lost. MariaDB is the
 * managed database (it checks passwords for real), and PostgreSQL for the lease whose COMMIT runs beside its
 * activation (ADR 0030).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createdLease, listLeasesResponse, listRotationsResponse, listVarsResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  dialectName,
  freshPgSchema,
  type ServerProcess,
  signupUser,
  startServer,
  until,
  upsert,
} from './harness.js';
import {
  machinePgConnection,
  mariadbAdmin,
  mariadbCanLogin,
  mariadbRoot,
  mariadbUserExists,
  pgAdmin,
  pgDropRoles,
  pgRoleExists,
} from './managed-dbs.js';

async function storeEnv(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (!process.env.TEST_DATABASE_URL) return { env: {}, drop: async () => {} };
  const schema = await freshPgSchema();
  return { env: { DATABASE_URL: schema.url, MASTER_KEY: randomBytes(32).toString('base64') }, drop: schema.drop };
}

describe(`credentials across a kill -9 (D71, D72, ${dialectName})`, () => {
  let maria: Awaited<ReturnType<typeof mariadbAdmin>>;
  let store: Awaited<ReturnType<typeof storeEnv>>;
  const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-crash-'));
  const base = { CONNECTIONS_TIMEOUT_MS: '1000', DEFAULT_PLAN: 'enterprise' };
  let srv: ServerProcess | null = null;

  beforeAll(async () => {
    maria = await mariadbAdmin();
    store = await storeEnv();
  });
  afterAll(async () => {
    await srv?.stop();
    await store?.drop();
    // The users of this suite's `crash` leases that a failing test may have left, and its admin.
    const crashed = await mariadbRoot(async (c) => {
      const [rows] = await c.query("select User from mysql.user where User like 'v\\_dev\\_crash\\_%'");
      return (rows as { User: string }[]).map((r) => r.User);
    });
    await maria?.drop(crashed);
  });

  /** One account, project and MariaDB connection on a server armed with `failpoint`. */
  async function setUp(failpoint: string) {
    // The previous test's server first: two processes on one data directory would share its SQLite file and
    // both run the revocation job, and the first would outlive the suite.
    await srv?.stop();
    srv = await startServer({ dataDir, env: { ...base, ...store.env, SVCENV_FAILPOINTS: failpoint } });
    const { jwt } = await signupUser(srv, 'Kim');
    const project = await createProject(srv, jwt, { name: `crash-${randomBytes(3).toString('hex')}` });
    const conn = await srv.request('POST', `/v1/projects/${project.id}/connections`, {
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
    return { jwt, projectId: project.id };
  }

  async function restart() {
    await srv!.stop('SIGKILL');
    srv = await startServer({ dataDir, env: { ...base, ...store.env } });
  }

  it('a lease whose process died after its create statements: its user is found and removed after restart', async () => {
    const { jwt, projectId } = await setUp('lease-after-create');
    const put = await srv!.request('PUT', `/v1/projects/${projectId}/envs/dev/dynamic/crash`, {
      token: jwt,
      body: { connection: 'maria', create: [`CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'`] },
    });
    expect(put.status, put.text).toBe(200);
    const died = await srv!
      .request('POST', `/v1/projects/${projectId}/envs/dev/dynamic/crash/leases`, { token: jwt, body: {} })
      .then(
        (r) => r.status,
        () => 'connection lost',
      );
    expect(died).toBe('connection lost');
    await until('the server to die', () => srv!.child.exitCode !== null || srv!.child.signalCode !== null);
    const users = await mariadbRoot(async (c) => {
      const [rows] = await c.query("select User from mysql.user where User like 'v\\_dev\\_crash\\_%'");
      return (rows as { User: string }[]).map((r) => r.User);
    });
    expect(users).toHaveLength(1); // the database made the user, svcenv never recorded the lease as given
    await restart();
    await until('the abandoned user removed', async () => !(await mariadbUserExists(users[0]!)), 45_000);
    const leases = await srv!.request('GET', `/v1/projects/${projectId}/envs/dev/dynamic/crash/leases?state=all`, {
      token: jwt,
    });
    expect(listLeasesResponse.parse(leases.body).leases).toEqual([
      expect.objectContaining({ username: users[0], state: 'failed' }),
    ]);
  }, 90_000);

  it('a PostgreSQL lease whose process died as its COMMIT was sent: the user is found and removed after restart', async () => {
    const { jwt, projectId } = await setUp('lease-after-create');
    const pgConn = await srv!.request('POST', `/v1/projects/${projectId}/connections`, {
      token: jwt,
      body: machinePgConnection(),
    });
    expect(pgConn.status, pgConn.text).toBe(201);
    const put = await srv!.request('PUT', `/v1/projects/${projectId}/envs/dev/dynamic/pgcrash`, {
      token: jwt,
      body: { connection: 'pg', create: [`CREATE ROLE "{{username}}" LOGIN PASSWORD '{{password}}'`] },
    });
    expect(put.status, put.text).toBe(200);
    const died = await srv!
      .request('POST', `/v1/projects/${projectId}/envs/dev/dynamic/pgcrash/leases`, { token: jwt, body: {} })
      .then(
        (r) => r.status,
        () => 'connection lost',
      );
    expect(died).toBe('connection lost');
    await until('the server to die', () => srv!.child.exitCode !== null || srv!.child.signalCode !== null);
    const made = await pgAdmin(async (c) => {
      const { rows } = await c.query("select rolname from pg_roles where rolname like 'v\\_dev\\_pgcrash\\_%'");
      return (rows as { rolname: string }[]).map((r) => r.rolname);
    });
    // The COMMIT left before the process died (PostgreSQL reads it before it sees the connection close), so
    // the role was made; the lease was still `creating`, and the job removes the role.
    expect(made).toHaveLength(1);
    await restart();
    const listed = await srv!.request('GET', `/v1/projects/${projectId}/envs/dev/dynamic/pgcrash/leases?state=all`, {
      token: jwt,
    });
    const [lease] = listLeasesResponse.parse(listed.body).leases;
    expect(lease).toMatchObject({ username: made[0] });
    try {
      await until('the abandoned role removed', async () => !(await pgRoleExists(lease!.username)), 45_000);
      await until('the lease ended', async () => {
        const res = await srv!.request('GET', `/v1/projects/${projectId}/envs/dev/dynamic/pgcrash/leases?state=all`, {
          token: jwt,
        });
        return listLeasesResponse.parse(res.body).leases[0]?.state === 'failed';
      });
    } finally {
      await pgDropRoles(made);
    }
  }, 90_000);

  it('a rotation whose process died after the database changed: the next attempt writes the pending password', async () => {
    const { jwt, projectId } = await setUp('rotation-after-change');
    const user = `svcenv_t_app_${randomBytes(3).toString('hex')}`;
    const first = `first${randomBytes(8).toString('hex')}`;
    await mariadbRoot((c) => c.query(`CREATE USER '${user}'@'%' IDENTIFIED BY '${first}'`));
    await upsert(srv!, jwt, projectId, ['dev'], [{ key: 'APP_DB_PASSWORD', value: first, type: 'secret' }]);
    const bind = await srv!.request('PUT', `/v1/projects/${projectId}/envs/dev/rotations/APP_DB_PASSWORD`, {
      token: jwt,
      body: { connection: 'maria', username: user, intervalSeconds: null },
    });
    expect(bind.status, bind.text).toBe(200);
    const died = await srv!
      .request('POST', `/v1/projects/${projectId}/envs/dev/rotations/APP_DB_PASSWORD/rotate`, { token: jwt, body: {} })
      .then(
        (r) => r.status,
        () => 'connection lost',
      );
    expect(died).toBe('connection lost');
    // The database has the new password; the variable still holds the old one, which no longer logs in.
    expect(await mariadbCanLogin(user, first)).toBe(false);
    await restart();
    const value = async () => {
      const res = await srv!.request('GET', `/v1/projects/${projectId}/envs/dev/vars?reveal=true`, { token: jwt });
      return listVarsResponse.parse(res.body).vars.find((v) => v.key === 'APP_DB_PASSWORD')?.value;
    };
    // The job finishes it once the dead process's holds lapse: its attempt's on the rotation
    // (CONNECTIONS_TIMEOUT_MS x 7 + 10 s) and its claim on the rotations task (six sweeps, 60 s: until then no
    // other process runs the task; services/credentials/jobs.ts).
    await until('the pending password written', async () => (await value()) !== first, 100_000);
    const now = (await value())!;
    expect(now).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(await mariadbCanLogin(user, now)).toBe(true);
    const rotations = await srv!.request('GET', `/v1/projects/${projectId}/envs/dev/rotations`, { token: jwt });
    expect(listRotationsResponse.parse(rotations.body).rotations[0]).toMatchObject({ lastError: null });
    await mariadbRoot((c) => c.query(`DROP USER '${user}'@'%'`));
  }, 150_000);

  it('a lease proven by its values after a clean restart too (the row and the user agree)', async () => {
    await srv?.stop();
    srv = await startServer({ dataDir, env: { ...base, ...store.env } });
    const { jwt } = await signupUser(srv, 'Lou');
    const project = await createProject(srv, jwt, { name: `calm-${randomBytes(3).toString('hex')}` });
    await srv.request('POST', `/v1/projects/${project.id}/connections`, {
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
    await srv.request('PUT', `/v1/projects/${project.id}/envs/dev/dynamic/calm`, {
      token: jwt,
      body: { connection: 'maria', create: [`CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'`] },
    });
    const res = await srv.request('POST', `/v1/projects/${project.id}/envs/dev/dynamic/calm/leases`, {
      token: jwt,
      body: {},
    });
    const lease = createdLease.parse(res.body);
    await srv.stop('SIGKILL');
    srv = await startServer({ dataDir, env: { ...base, ...store.env } });
    expect(await mariadbCanLogin(lease.username, lease.values.CALM_PASSWORD!)).toBe(true);
    const del = await srv.request('DELETE', `/v1/projects/${project.id}/envs/dev/dynamic/calm/leases/${lease.id}`, {
      token: jwt,
    });
    expect(del.status, del.text).toBe(204);
    expect(await mariadbCanLogin(lease.username, lease.values.CALM_PASSWORD!)).toBe(false);
  }, 60_000);
});
