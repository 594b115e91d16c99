/**
 * `npm start`'s path: the prestart build (server/scripts/build.mjs) and the compiled server it leaves in
 * dist/server, run with plain Node as package.json's `start` says, as a child process. The other suites run
 * the sources through tsx (harness.ts); these check that what operators actually start works: an empty
 * DATA_DIR (D1), /healthz (D6) and /readyz (D52), and the dependencies the bundle carries (the SQLite audit
 * writer thread beside the bundle, migrations, nodemailer, prom-client, and pg and ioredis when the suite
 * runs with PostgreSQL and Redis), then the admin bundle and the SIGTERM drain.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditPage } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFresh, NATIVE, outDir } from '../scripts/build.mjs';
import { redisForTests, testRedisPrefix } from './account-helpers.js';
import {
  client,
  createProject,
  createToken,
  dialectName,
  freePort,
  freshPgSchema,
  repoRoot,
  signupUser,
  TEST_DATABASE_URL,
  upsert,
} from './harness.js';
import { startSmtpCapture } from './smtp.js';

const scripts = (
  JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;
const METRICS_TOKEN = 'metrics-token-for-the-startup-test';

interface Started {
  url: string;
  child: ChildProcess;
  logs: () => string;
  exit: Promise<number | null>;
}

/** The `start` script's command, with this Node, as a child process; resolves once /healthz answers 200. */
async function npmStartPath(env: Record<string, string>): Promise<Started> {
  const [cmd, ...args] = scripts.start!.split(' ');
  expect(cmd).toBe('node');
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${out}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`the server did not answer /healthz:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, child, logs: () => out, exit };
}

describe(`npm start's path: the compiled server in dist/server (${dialectName})`, () => {
  const children: ChildProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(() => {
    // What `npm start` runs first; it builds dist/server when server/ or contract/ changed since the last build.
    const pre = spawnSync('sh', ['-c', scripts.prestart!], { cwd: repoRoot, encoding: 'utf8' });
    expect(pre.status, pre.stderr).toBe(0);
  }, 120_000);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    for (const c of cleanups) await c();
  });

  it('runs compiled JavaScript with plain Node, built fresh by prestart', () => {
    expect(scripts.prestart).toContain('server/scripts/build.mjs');
    expect(scripts.postinstall).toContain('server/scripts/build.mjs');
    expect(scripts.start).toBe('node dist/server/main.mjs');
    expect(scripts.start).not.toContain('tsx');
    expect(isFresh()).toBe(true);
    for (const f of ['main.mjs', 'admin.mjs', 'audit-writer.worker.mjs'])
      expect(existsSync(join(outDir, f))).toBe(true);
    // Everything but Node's own modules and the packages with native addons is in the bundle: nothing of ours
    // (@svcenv/contract is TypeScript) or of node_modules is left for Node to resolve at run time.
    const main = readFileSync(join(outDir, 'main.mjs'), 'utf8');
    const statements = /(?:^|[;}\n])import\s*(?:[\w$*{}\s,]+?from\s*)?["']([^"']+)["']/g;
    const imported = new Set([...main.matchAll(statements)].map((m) => m[1]!));
    expect(main).not.toMatch(/\bimport\(\s*["'][^"']+["']\s*\)/); // no dynamic import of a package by name
    const unexpected = [...imported].filter((m) => !m.startsWith('node:') && !NATIVE.includes(m));
    expect(unexpected).toEqual([]);
    expect([...imported].filter((m) => NATIVE.includes(m)).sort()).toEqual([...NATIVE].sort());
  });

  it('serves /healthz and /readyz from an empty DATA_DIR it creates, with a generated 0600 master key (D1, D6, D52)', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'svcenv-start-')), 'nested', 'data');
    const srv = await npmStartPath({ DATA_DIR: dataDir, DRAIN_GRACE_MS: '100' });
    children.push(srv.child);
    const health = await fetch(`${srv.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true });
    const ready = await fetch(`${srv.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true });
    expect(statSync(join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'svcenv.db')).isFile()).toBe(true);
    // The dashboard (web/dist, found from the bundle's own location) is served at /.
    const index = await fetch(`${srv.url}/`);
    expect(index.status).toBe(200);
    expect(await index.text()).toContain('<div id="app"');
    // SIGTERM: drains, stops, exits 0 (main.ts's shutdown, from the bundle).
    srv.child.kill('SIGTERM');
    expect(await srv.exit).toBe(0);
    expect(srv.logs()).toContain('"msg":"stopped"');
  });

  it('serves signup, a project, variables and an audited pull, with email over SMTP and /metrics; then admin verify', async () => {
    const env: Record<string, string> = {
      DATA_DIR: mkdtempSync(join(tmpdir(), 'svcenv-start-')),
      METRICS_TOKEN,
      DRAIN_GRACE_MS: '100',
    };
    if (TEST_DATABASE_URL) {
      const schema = await freshPgSchema();
      cleanups.push(schema.drop);
      env.DATABASE_URL = schema.url;
      env.MASTER_KEY = Buffer.alloc(32, 9).toString('base64');
    }
    const redis = await redisForTests();
    if (redis) {
      env.REDIS_URL = redis;
      env.REDIS_KEY_PREFIX = testRedisPrefix();
    }
    const smtp = await startSmtpCapture();
    cleanups.push(smtp.stop);
    env.SMTP_URL = smtp.url;

    const srv = await npmStartPath(env);
    children.push(srv.child);
    const api = client(srv.url);
    const { jwt, email } = await signupUser(api);
    // The verification email went through nodemailer (bundled) to a real SMTP server.
    expect((await smtp.waitFor(email)).subject).toMatch(/verify/i);
    const p = await createProject(api, jwt);
    await upsert(
      api,
      jwt,
      p.id,
      ['dev'],
      [
        { key: 'HOST', value: 'db.internal', type: 'plain' },
        { key: 'URL', value: 'postgres://${HOST}/app', type: 'secret' },
      ],
    );
    const { token } = await createToken(api, jwt, { projectId: p.id });
    const pull = await api.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token });
    expect(pull.status).toBe(200);
    expect(pull.text).toContain('URL=');
    expect(pull.text).toContain('postgres://db.internal/app');
    // The pull is audited before it is answered: on SQLite by the writer thread loaded from dist/server.
    const audit = await api.request('GET', `/v1/projects/${p.id}/audit`, { token: jwt, schema: auditPage });
    expect(audit.body.logs[0]?.action).toBe('vars.pull');
    // A login counted by the rate limiter (ioredis when REDIS_URL is set).
    const login = await api.request('POST', '/v1/auth/login', { body: { email, password: 'wrong password!' } });
    expect(login.status).toBe(401);
    const metrics = await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.status).toBe(200);
    const scrape = await metrics.text();
    expect(/^svcenv_process_resident_memory_bytes \d/m.test(scrape), scrape.slice(0, 300)).toBe(true);
    expect(/^svcenv_http_requests_total\{[^}]*route="[^"]*\/pull"[^}]*status="200"/m.test(scrape)).toBe(true);

    srv.child.kill('SIGTERM');
    expect(await srv.exit).toBe(0);
    // `npm run admin -- verify` runs dist/server/admin.mjs the same way: it decrypts every stored value.
    const [cmd, ...args] = scripts.admin!.split(' ');
    expect(cmd).toBe('node');
    const admin = spawnSync(process.execPath, [...args, 'verify'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', ...env },
      encoding: 'utf8',
    });
    expect(admin.status, admin.stderr).toBe(0);
    expect(admin.stdout).toMatch(/^checked 2 values and \d+ history entries: 0 failed/m);
  });
});
