import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  createProject,
  createToken,
  freshPgSchema,
  projectList,
  rawConnection,
  repoRoot,
  signupUser,
  startServer,
  upsert,
} from './harness.js';

/** On PostgreSQL runs, a fresh schema per test (dropped after), and the master key every instance shares. */
async function pgEnv(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (!process.env.TEST_DATABASE_URL) return { env: {}, drop: async () => {} };
  const schema = await freshPgSchema();
  return { env: { DATABASE_URL: schema.url, MASTER_KEY: Buffer.alloc(32, 7).toString('base64') }, drop: schema.drop };
}

describe('the server process (main.ts)', () => {
  it('writes request log lines within a moment, gathered, and every line by a graceful stop (lib/log-sink.ts)', async () => {
    const srv = await startServer();
    try {
      // A path of its own (answered 404), so the start-up's health polls are not counted.
      const probe = () => srv.request('GET', '/v1/log-sink-probe');
      const lines = () =>
        srv
          .logs()
          .split('\n')
          .filter((l) => l.includes('"path":"/v1/log-sink-probe"'));
      for (let i = 0; i < 20; i++) expect((await probe()).status).toBe(404);
      // Gathered for up to 25 ms, then written: no request waits for its line, and no line waits long.
      await until(() => lines().length === 20);
      for (let i = 0; i < 5; i++) await probe();
      expect(await srv.stop('SIGTERM')).toBe(0);
      expect(lines()).toHaveLength(25);
      expect(srv.logs()).toContain('"msg":"stopped"');
    } finally {
      await srv.stop();
    }
  });

  it('starts with no set-up: creates DATA_DIR and a 0600 master key, warns once, never logs the key (D1)', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'svcenv-d1-')), 'nested', 'data');
    const srv = await startServer({ dataDir });
    try {
      const health = await srv.request('GET', '/healthz');
      expect(health.status).toBe(200);
      expect(health.body).toEqual({ ok: true });
      const keyFile = join(dataDir, 'master.key');
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      const key = readFileSync(keyFile, 'utf8').trim();
      expect(Buffer.from(key, 'base64')).toHaveLength(32);
      const warnings = srv
        .logs()
        .split('\n')
        .filter((l) => l.includes('"level":40'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('MASTER_KEY');
      expect(srv.logs()).not.toContain(key);
    } finally {
      await srv.stop();
    }
  });

  it('keeps every acknowledged write across a SIGKILL and restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-kill-'));
    const pg = await pgEnv();
    const env = pg.env;
    const first = await startServer({ dataDir, env });
    const { jwt } = await signupUser(first);
    const p = await createProject(first, jwt);
    const { token } = await createToken(first, jwt);
    await upsert(
      first,
      jwt,
      p.id,
      ['dev'],
      Array.from({ length: 50 }, (_, i) => ({ key: `K${i}`, value: `v${i}`, type: 'secret' })),
    );
    await first.stop('SIGKILL');
    const second = await startServer({ dataDir, env });
    try {
      const res = await second.request('GET', `/v1/projects/${p.id}/envs/dev/pull?metadata=false`, { token });
      expect(res.status).toBe(200);
      expect(res.text.trim().split('\n')).toHaveLength(50);
      expect(res.text).toContain('K49=v49');
    } finally {
      await second.stop();
      await pg.drop();
    }
  });

  it.runIf(!!process.env.TEST_DATABASE_URL)(
    'goes on when PostgreSQL closes its connections: each is opened again on next use, with a warning',
    async () => {
      // A database restart or failover, a proxy's idle timeout: the connections of both pools and the
      // long-poll listener end from the database's side while idle. pg-pool reports that as an 'error' event,
      // which ended the process when nothing listened (db/index.ts `openDb`).
      const store = await pgEnv();
      const appName = `svcenv-lost-${randomBytes(4).toString('hex')}`;
      const url = new URL(store.env.DATABASE_URL!);
      url.searchParams.set('application_name', appName);
      const srv = await startServer({ env: { ...store.env, DATABASE_URL: url.toString() } });
      const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await admin.connect();
      try {
        const { jwt } = await signupUser(srv);
        const p = await createProject(srv, jwt);
        const { token } = await createToken(srv, jwt);
        await upsert(srv, jwt, p.id, ['dev'], [{ key: 'K', value: 'before', type: 'secret' }]);
        const pull = () => srv.request('GET', `/v1/projects/${p.id}/envs/dev/pull?metadata=false`, { token });
        expect((await pull()).text).toContain('K=before');

        const ended = await admin.query(
          'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
          [appName],
        );
        // Kysely's pool, the hot queries' pool and the listener each had at least one.
        expect(ended.rowCount).toBeGreaterThanOrEqual(3);
        await until(() => srv.logs().includes('an idle PostgreSQL connection was closed by the database'));

        const value = `after-${randomBytes(6).toString('hex')}`;
        await upsert(srv, jwt, p.id, ['dev'], [{ key: 'K', value, type: 'secret' }]);
        const res = await pull();
        expect(res.status).toBe(200);
        expect(res.text).toContain(`K=${value}`);
        expect(srv.logs()).not.toContain(value);
      } finally {
        await admin.end();
        await srv.stop();
        await store.drop();
      }
    },
  );

  it('stops gracefully on SIGTERM, exiting 0, after finishing a request already in flight', async () => {
    const pg = await pgEnv();
    const srv = await startServer({ env: pg.env });
    const { jwt } = await signupUser(srv);
    // The test holds the database's write lock, so the request below is provably inside the server when
    // SIGTERM arrives, and can only finish after the stop began. `100 Continue` says the server has routed
    // it (so it is not refused as arriving after the stop); on PostgreSQL the server's session is then seen
    // waiting for the lock; on SQLite the wait blocks the server's thread (busy_timeout), so the signal is
    // handled once the request is done.
    const lock = await holdWriteLock(pg.env.DATABASE_URL, srv.dataDir);
    const body = JSON.stringify({ name: 'made-during-stop' });
    const socket = rawConnection(srv.url);
    socket.write(
      `POST /v1/projects HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${jwt}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        'expect: 100-continue\r\nconnection: close\r\n\r\n',
    );
    await until(() => socket.text().includes('100 Continue'));
    socket.write(body);
    await lock.waitedFor();
    expect(socket.text()).toBe('HTTP/1.1 100 Continue\r\n\r\n'); // no answer yet: the request waits for the lock
    const code = srv.stop('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    await lock.release();
    await socket.closed;
    const answer = socket.text();
    expect(answer).toMatch(/HTTP\/1\.1 201 Created[\s\S]*made-during-stop/);
    expect(await code).toBe(0);
    expect(srv.logs()).toContain('"msg":"stopped"');
    // Acknowledged means kept: a new instance on the same data lists it.
    const again = await startServer({ dataDir: srv.dataDir, env: pg.env });
    try {
      const list = await again.request('GET', '/v1/projects', { token: jwt, schema: projectList });
      expect(JSON.stringify(list.body)).toContain('made-during-stop');
    } finally {
      await again.stop();
      await pg.drop();
    }
  });

  it('answers a request that arrives while it drains with 503 in the error shape, and closes that connection', async () => {
    const srv = await startServer();
    const { jwt } = await signupUser(srv);
    const socket = rawConnection(srv.url);
    // The first request is in flight (routed, its body not sent) when SIGTERM arrives; the second is
    // pipelined behind it on the same connection, so it arrives during the drain.
    const body = JSON.stringify({ name: 'made-during-drain' });
    socket.write(
      `POST /v1/projects HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${jwt}\r\ncontent-type: application/json\r\n` +
        `content-length: ${body.length}\r\nexpect: 100-continue\r\n\r\n`,
    );
    await until(() => socket.text().includes('100 Continue'));
    const code = srv.stop('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    socket.write(`${body}GET /v1/projects HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${jwt}\r\n\r\n`);
    await socket.closed;
    const answer = socket.text();
    expect(answer).toMatch(/HTTP\/1\.1 201 Created[\s\S]*made-during-drain/);
    const late = answer.slice(answer.indexOf('HTTP/1.1 503'));
    expect(late).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(late.toLowerCase()).toContain('connection: close');
    expect(late.toLowerCase()).toContain('cache-control: no-store');
    expect(JSON.parse(late.slice(late.indexOf('\r\n\r\n') + 4))).toEqual({
      error: { code: 'SERVER', message: expect.any(String), field: '' },
    });
    expect(await code).toBe(0);
  });

  it('refuses plain HTTP on a non-loopback address and lists every configuration problem (D4)', () => {
    const res = spawnSync(join(repoRoot, 'node_modules', '.bin', 'tsx'), [join(repoRoot, 'server', 'src', 'main.ts')], {
      env: {
        PATH: process.env.PATH,
        HOST: '0.0.0.0',
        PORT: 'eighty',
        DATA_DIR: mkdtempSync(join(tmpdir(), 'svcenv-cfg-')),
      },
      encoding: 'utf8',
    });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('HOST');
    expect(res.stderr).toContain('PORT');
  });

  it('serves HTTPS only, TLS 1.2 or newer, with HSTS, given a certificate (D4)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svcenv-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
      ],
      { stdio: 'ignore' },
    );
    const srv = await startServer({
      env: { TLS_CERT_FILE: join(dir, 'cert.pem'), TLS_KEY_FILE: join(dir, 'key.pem') },
    });
    try {
      expect(srv.url.startsWith('https://')).toBe(true);
      const port = new URL(srv.url).port;
      const curl = (args: string[]) =>
        spawnSync('curl', ['-sk', '-o', '/dev/null', '-D', '-', ...args], { encoding: 'utf8' });
      const ok = curl(['--tlsv1.2', `https://127.0.0.1:${port}/healthz`]);
      expect(ok.stdout).toMatch(/^HTTP\/1\.1 200/);
      expect(ok.stdout.toLowerCase()).toContain('strict-transport-security: max-age=31536000');
      const old = curl(['--tlsv1.1', '--tls-max', '1.1', `https://127.0.0.1:${port}/healthz`]);
      expect(old.stdout).toBe('');
      const plain = spawnSync(
        'curl',
        ['-s', '-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${port}/healthz`],
        { encoding: 'utf8' },
      );
      expect(plain.stdout).not.toBe('200');
    } finally {
      await srv.stop();
    }
  });
});

const until = async (ok: () => boolean) => {
  while (!ok()) await new Promise((r) => setTimeout(r, 10));
};

/**
 * Takes the write lock of the server's database from this process. `waitedFor` resolves once a server
 * session waits for it (PostgreSQL shows that; on SQLite, a moment later); `release` lets it go.
 */
async function holdWriteLock(databaseUrl: string | undefined, dataDir: string) {
  if (databaseUrl) {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    await c.query('begin');
    await c.query('lock table projects in exclusive mode');
    return {
      async waitedFor() {
        for (;;) {
          // Within a transaction pg_stat_activity is a snapshot taken at its first read: take a new one.
          await c.query('select pg_stat_clear_snapshot()');
          const r = await c.query(
            "select 1 from pg_stat_activity where wait_event_type = 'Lock' and pid <> pg_backend_pid() and query ilike '%projects%'",
          );
          if (r.rowCount) return;
          await new Promise((res) => setTimeout(res, 10));
        }
      },
      async release() {
        await c.query('commit');
        await c.end();
      },
    };
  }
  const db = new Database(join(dataDir, 'svcenv.db'));
  db.exec('begin immediate');
  return {
    waitedFor: () => new Promise((r) => setTimeout(r, 300)),
    async release() {
      db.exec('commit');
      db.close();
    },
  };
}
