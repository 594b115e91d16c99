/**
 * D71 from the command line (ADR 0030): the compiled svcenv against the real server, leasing database users of
 * the machine's PostgreSQL and MariaDB. A lease is proven by logging in with the values the child was given,
 * and its revocation by failing to once `run` has ended, for each way a run can end.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createProject,
  createToken,
  type ServerProcess,
  signupUser,
  startServer,
  upsert,
} from '../../server/test/harness.js';
import {
  MARIADB,
  mariadbAdmin,
  mariadbCanLogin,
  PG,
  pgCanLogin,
  pgDropRoles,
  startRelay,
} from '../../server/test/managed-dbs.js';
import { hostBinary, runCli, spawnCli, tempDir, waitFor } from './helpers.js';

const STATIC_SECRET = 'static-secret-value-123';

let server: ServerProcess;
let jwt: string;
let projectId: string;
let env: Record<string, string>;
let maria: Awaited<ReturnType<typeof mariadbAdmin>>;
let relay: Awaited<ReturnType<typeof startRelay>>;

const PG_CREATE = [
  `CREATE ROLE "{{username}}" LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}'`,
  `GRANT CONNECT ON DATABASE test TO "{{username}}"`,
];
const MARIA_CREATE = [`CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}'`];

async function api(method: string, path: string, body?: unknown) {
  const res = await server.request(method, `/v1/projects/${projectId}${path}`, { token: jwt, body });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res;
}

beforeAll(async () => {
  server = await startServer({ env: { DEFAULT_PLAN: 'enterprise', CONNECTIONS_TIMEOUT_MS: '2000' } });
  ({ jwt } = await signupUser(server));
  projectId = (await createProject(server, jwt, { name: 'Leasing' })).id;
  // A read-scope token: what may pull may lease (D71), and its creator may revoke.
  const token = (await createToken(server, jwt, { scope: 'read', projectId })).token;
  maria = await mariadbAdmin();
  relay = await startRelay(PG);
  await upsert(
    server,
    jwt,
    projectId,
    ['dev', 'staging'],
    [
      { key: 'STATIC', value: STATIC_SECRET, type: 'secret' },
      { key: 'PORT', value: '8080', type: 'plain' },
    ],
  );
  const conn = (name: string, kind: string, port: number, username: string, password: string) =>
    api('POST', '/connections', {
      name,
      kind,
      host: '127.0.0.1',
      port,
      ...(kind === 'postgres' ? { database: PG.database } : {}),
      username,
      password,
      tls: { mode: 'disable' },
    });
  await conn('pg', 'postgres', PG.port, 'postgres', 'pw-trust-ignores-it');
  await conn('maria', 'mysql', MARIADB.port, maria.username, maria.password);
  await conn('pg-away', 'postgres', relay.port, 'postgres', 'pw-trust-ignores-it');
  await api('PUT', '/envs/dev/dynamic/clidb', { connection: 'pg', create: PG_CREATE });
  await api('PUT', '/envs/dev/dynamic/climaria', { connection: 'maria', create: MARIA_CREATE });
  // staging: a database that is away when run starts.
  await relay.down();
  await api('PUT', '/envs/staging/dynamic/away', { connection: 'pg-away', create: PG_CREATE });
  await api('PUT', '/envs/staging/dynamic/clidb', { connection: 'pg', create: PG_CREATE });
  // prod: the shortest TTL, renewable to 45 s only.
  await api('PUT', '/envs/prod/dynamic/short', {
    connection: 'pg',
    create: PG_CREATE,
    defaultTtlSeconds: 30,
    maxTtlSeconds: 45,
  });
  env = { SVCENV_API_URL: server.url, SVCENV_TOKEN: token, SVCENV_PROJECT: projectId, SVCENV_ENV: 'dev' };
}, 60_000);

/** The users every lease of this suite made, ended or not, as the server lists them. */
async function leasedHere(): Promise<string[]> {
  const names: string[] = [];
  for (const envName of ['dev', 'staging', 'prod']) {
    const list = await api('GET', `/envs/${envName}/dynamic`);
    for (const d of (list.body as { dynamicSecrets: { name: string }[] }).dynamicSecrets) {
      const leases = await api('GET', `/envs/${envName}/dynamic/${d.name}/leases?state=all`);
      names.push(...(leases.body as { leases: { username: string }[] }).leases.map((l) => l.username));
    }
  }
  return names;
}

afterAll(async () => {
  // Only the users this suite's leases made (a failing test may have left some), never another suite's.
  const leased = server ? await leasedHere().catch(() => []) : [];
  await server?.stop();
  await relay?.stop();
  await maria?.drop(leased);
  await pgDropRoles(leased);
});

const home = () => ({ HOME: tempDir('svcenv-home-') });

/** What the child saw: its pid and the leased users and passwords, written to a file the test reads. */
interface Seen {
  pid: number;
  pgUser: string;
  pgPassword: string;
  mariaUser: string;
  mariaPassword: string;
}

/**
 * A child that writes what it was given to `out`, prints its leased password (to be scrubbed), then becomes
 * `tail` (exec: the same pid, no grandchild holding the pipes) which waits for `go` to exist, or `sleep`.
 */
function childScript(out: string, go?: string): string {
  const write = `printf '%s\\n' "$$" "$CLIDB_USERNAME" "$CLIDB_PASSWORD" "$CLIMARIA_USERNAME" "$CLIMARIA_PASSWORD" > ${out}.tmp && mv ${out}.tmp ${out}`;
  const show = `echo "pg=$CLIDB_PASSWORD maria=$CLIMARIA_PASSWORD static=$STATIC"; echo "err=$CLIDB_PASSWORD" >&2`;
  const wait = go ? `while [ ! -e ${go} ]; do sleep 0.05; done` : 'exec sleep 60';
  return `${write}; ${show}; ${wait}`;
}

async function seen(out: string): Promise<Seen> {
  await waitFor(() => existsSync(out), 'the child to start', 20_000);
  const [pid, pgUser, pgPassword, mariaUser, mariaPassword] = readFileSync(out, 'utf8').split('\n');
  return {
    pid: Number(pid),
    pgUser: pgUser!,
    pgPassword: pgPassword!,
    mariaUser: mariaUser!,
    mariaPassword: mariaPassword!,
  };
}

/** The leased users work while the child runs (MariaDB checks the password; PostgreSQL here trusts). */
async function expectLoggedIn(s: Seen) {
  expect(s.pgUser).toMatch(/^v_dev_clidb_/);
  expect(s.pgPassword).toMatch(/^[A-Za-z0-9]{32}$/);
  expect(s.mariaUser).toMatch(/^v_dev_climaria_/);
  expect(await pgCanLogin(s.pgUser, s.pgPassword)).toBe(true);
  expect(await mariadbCanLogin(s.mariaUser, s.mariaPassword)).toBe(true);
  expect(await mariadbCanLogin(s.mariaUser, 'not-the-password')).toBe(false);
}

async function expectGone(s: Seen) {
  expect(await pgCanLogin(s.pgUser, s.pgPassword)).toBe(false);
  expect(await mariadbCanLogin(s.mariaUser, s.mariaPassword)).toBe(false);
}

/** Output is scrubbed of leased values like any secret (spec run rule 6, D71). */
function expectScrubbed(r: { stdout: string; stderr: string }, s: Seen) {
  expect(r.stdout).toContain('pg=*** maria=*** static=***');
  expect(r.stderr).toContain('err=***');
  for (const v of [s.pgPassword, s.mariaPassword, s.pgUser, STATIC_SECRET]) {
    expect(r.stdout).not.toContain(v);
    expect(r.stderr).not.toContain(v);
  }
}

describe('run leases the dynamic secrets in its scope and revokes them on every exit (D71)', () => {
  it('the child exits on its own: exit status passed through, leases revoked', async () => {
    const dir = tempDir();
    const out = join(dir, 'seen');
    const go = join(dir, 'go');
    const run = spawnCli(['run', '--all', '--', 'sh', '-c', `${childScript(out, go)}; exit 7`], {
      env: { ...env, ...home() },
    });
    const s = await seen(out);
    await expectLoggedIn(s);
    writeFileSync(go, '');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(7);
    expectScrubbed(r, s);
    await expectGone(s);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to svcenv is forwarded to the child; the leases are revoked after it exits`, async () => {
      const out = join(tempDir(), 'seen');
      const run = spawnCli(['run', '--all', '--', 'sh', '-c', childScript(out)], { env: { ...env, ...home() } });
      const s = await seen(out);
      await expectLoggedIn(s);
      run.child.kill(signal);
      const r = await run.done;
      expect(r.code, r.stderr).toBe(128 + (signal === 'SIGTERM' ? 15 : 2));
      expect(r.signal).toBe(null);
      expectScrubbed(r, s);
      await expectGone(s);
    });
  }

  it('the child killed by a signal (SIGKILL from elsewhere): 137, leases revoked', async () => {
    const out = join(tempDir(), 'seen');
    const run = spawnCli(['run', '--all', '--', 'sh', '-c', childScript(out)], { env: { ...env, ...home() } });
    const s = await seen(out);
    await expectLoggedIn(s);
    process.kill(s.pid, 'SIGKILL');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(137);
    await expectGone(s);
  });

  it('svcenv itself interrupted: Ctrl-C to its whole process group, then a second Ctrl-C while it revokes', async () => {
    const out = join(tempDir(), 'seen');
    // Its own process group, as a shell gives a foreground job: the terminal's SIGINT reaches svcenv and the child.
    const child: ChildProcess = spawn(hostBinary, ['run', '--all', '--', 'sh', '-c', childScript(out)], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env, ...home() },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    child.stdout!.resume();
    const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const s = await seen(out);
    await expectLoggedIn(s);
    process.kill(-child.pid!, 'SIGINT');
    // Impatient: again at once; svcenv still revokes before it exits.
    setTimeout(() => process.kill(-child.pid!, 'SIGINT'), 5);
    expect(await done, stderr).toBe(130);
    await expectGone(s);
  });

  it('a database that is away when run starts: exit 1, one line naming it, no child, the other lease revoked', async () => {
    const marker = join(tempDir(), 'started');
    const r = await runCli(['run', '--all', '--', 'sh', '-c', `touch ${marker}`], {
      env: { ...env, ...home(), SVCENV_ENV: 'staging' },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^UPSTREAM_FAILED: cannot lease the dynamic secret away: .+\n$/);
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(existsSync(marker)).toBe(false);
    // staging's `clidb` (PostgreSQL, up) was leased beside it, and revoked before svcenv exited.
    const all = await api('GET', '/envs/staging/dynamic/clidb/leases?state=all');
    const leases = (all.body as { leases: { state: string; username: string }[] }).leases;
    expect(leases.map((l) => l.state)).toEqual(['revoked']);
    expect(await pgCanLogin(leases[0]!.username, 'x')).toBe(false);
  });

  it('the scope decides: --only leases what it names, --except all of its keys or --no-dynamic leases nothing', async () => {
    const show = 'echo "u=${CLIDB_USERNAME:-none} m=${CLIMARIA_USERNAME:-none} p=${PORT:-none}"';
    const only = await runCli(['run', '--only', 'CLIDB_PASSWORD,PORT', '--', 'sh', '-c', show], {
      env: { ...env, ...home() },
    });
    expect(only.code, only.stderr).toBe(0);
    // The username is leased with the password but is not exposed: --only names what the child gets.
    expect(only.stdout).toBe('u=none m=none p=8080\n');
    const onlyLeased = await runCli(['run', '--only', 'CLIMARIA_USERNAME', '--', 'sh', '-c', show], {
      env: { ...env, ...home() },
    });
    expect(onlyLeased.code, onlyLeased.stderr).toBe(0);
    expect(onlyLeased.stdout).toBe('u=none m=*** p=none\n');
    const except = await runCli(['run', '--all', '--except', 'CLIDB_USERNAME,CLIDB_PASSWORD', '--', 'sh', '-c', show], {
      env: { ...env, ...home() },
    });
    expect(except.stdout).toBe('u=none m=*** p=8080\n');
    const none = await runCli(['run', '--all', '--no-dynamic', '--', 'sh', '-c', show], {
      env: { ...env, ...home() },
    });
    expect(none.stdout).toBe('u=none m=none p=8080\n');
    // Every lease of these runs was revoked at their ends.
    for (const name of ['clidb', 'climaria']) {
      const leases = await api('GET', `/envs/dev/dynamic/${name}/leases`);
      expect((leases.body as { leases: unknown[] }).leases, name).toEqual([]);
    }
  });

  it('renews at two thirds of the TTL, up to maxExpiresAt, then says once that it cannot', async () => {
    const out = join(tempDir(), 'seen');
    const script = `printf '%s\\n' "$SHORT_USERNAME" > ${out}; exec sleep 60`;
    const run = spawnCli(['run', '--all', '--', 'sh', '-c', script], {
      env: { ...env, ...home(), SVCENV_ENV: 'prod' },
    });
    await waitFor(() => existsSync(out) && readFileSync(out, 'utf8').includes('\n'), 'the child', 20_000);
    const user = readFileSync(out, 'utf8').trim();
    const lease = async () =>
      (await api('GET', '/envs/prod/dynamic/short/leases')).body as {
        leases: { createdAt: string; expiresAt: string; username: string }[];
      };
    const [first] = (await lease()).leases;
    expect(first!.username).toBe(user);
    expect(Date.parse(first!.expiresAt) - Date.parse(first!.createdAt)).toBeCloseTo(30_000, -3);
    // 2/3 of 30 s: renewed at about 20 s, to the 45 s cap, which it then says it cannot pass.
    await waitFor(() => run.out().stderr.includes('cannot be renewed past'), 'the renewal', 26_000);
    const [renewed] = (await lease()).leases;
    expect(Date.parse(renewed!.expiresAt) - Date.parse(renewed!.createdAt)).toBeCloseTo(45_000, -3);
    expect(run.out().stderr.match(/cannot be renewed/g)).toHaveLength(1);
    expect(await pgCanLogin(user, 'x')).toBe(true);
    run.child.kill('SIGTERM');
    expect((await run.done).code).toBe(143);
    expect(await pgCanLogin(user, 'x')).toBe(false);
  }, 40_000);
});

describe('svcenv lease (D71)', () => {
  it('prints one lease in the format asked for, its id and expiry on stderr; lease revoke ends it', async () => {
    const r = await runCli(['lease', 'climaria', '--format', 'json', '--ttl', '2m'], { env: { ...env, ...home() } });
    expect(r.code, r.stderr).toBe(0);
    const values = JSON.parse(r.stdout) as Record<string, string>;
    expect(Object.keys(values).sort()).toEqual(['CLIMARIA_PASSWORD', 'CLIMARIA_USERNAME']);
    expect(await mariadbCanLogin(values.CLIMARIA_USERNAME!, values.CLIMARIA_PASSWORD!)).toBe(true);
    const m = /^lease ([0-9a-f-]{36}) of climaria: user (\S+), expires (\S+)\n/.exec(r.stderr);
    expect(m, r.stderr).not.toBeNull();
    expect(m![2]).toBe(values.CLIMARIA_USERNAME);
    expect(Date.parse(m![3]!) - Date.now()).toBeGreaterThan(100_000);
    expect(Date.parse(m![3]!) - Date.now()).toBeLessThan(121_000);
    expect(r.stderr).not.toContain(values.CLIMARIA_PASSWORD);
    const revoke = await runCli(['lease', 'revoke', 'climaria', m![1]!], { env: { ...env, ...home() } });
    expect(revoke.code, revoke.stderr).toBe(0);
    expect(await mariadbCanLogin(values.CLIMARIA_USERNAME!, values.CLIMARIA_PASSWORD!)).toBe(false);

    const shell = await runCli(['lease', 'clidb', '--format', 'shell'], { env: { ...env, ...home() } });
    expect(shell.stdout).toMatch(
      /^export CLIDB_USERNAME='v_dev_clidb_[a-z0-9_]+'\nexport CLIDB_PASSWORD='[A-Za-z0-9]{32}'\n$/,
    );
    const dotenv = await runCli(['lease', 'clidb'], { env: { ...env, ...home() } });
    expect(dotenv.stdout).toMatch(/^CLIDB_USERNAME=v_dev_clidb_\S+\nCLIDB_PASSWORD=\S{32}\n$/);
  });

  it('refuses what it cannot do with exit 1: a bad format or TTL, an unknown secret, a database away', async () => {
    const e = { env: { ...env, ...home() } };
    const bad = await runCli(['lease', 'clidb', '--format', 'k8s'], e);
    expect([bad.code, bad.stderr.split('\n')[0]]).toEqual([1, 'error: unknown --format k8s']);
    const short = await runCli(['lease', 'clidb', '--ttl', '5s'], e);
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/^VALIDATION: cannot lease the dynamic secret clidb: .*ttlSeconds/);
    const missing = await runCli(['lease', 'nope'], e);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^NOT_FOUND: cannot lease the dynamic secret nope/);
    const away = await runCli(['lease', 'away', '--env', 'staging'], e);
    expect(away.code).toBe(1);
    expect(away.stderr).toMatch(/^UPSTREAM_FAILED: cannot lease the dynamic secret away: /);
    const help = await runCli(['lease', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: svcenv lease <name> [--ttl <duration>]');
  });
});
