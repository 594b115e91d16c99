import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { type AddressInfo, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { type DbHandle, migrate, openDb } from '../src/db/index.js';
import type { Clock } from '../src/lib/clock.js';
import type { Resolver } from '../src/lib/net-guard.js';
import type { Deps } from '../src/services/deps.js';

/**
 * Test harness: the real server on a random loopback port with a temporary data directory, on SQLite or,
 * when TEST_DATABASE_URL is set, on a fresh PostgreSQL schema of its own (dropped at stop).
 */
const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = join(here, '..', '..');
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
export const dialectName = TEST_DATABASE_URL ? 'postgres' : 'sqlite';

export interface Res<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface Client {
  url: string;
  request<T = any>(
    method: string,
    path: string,
    opts?: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<Res<T>>;
}

export function client(url: string): Client {
  return {
    url,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let payload: string | undefined = opts.rawBody;
      if (opts.body !== undefined) {
        payload = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(url + path, { method, headers, body: payload });
      const text = await res.text();
      let body: any = text;
      if ((res.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
      return { status: res.status, headers: res.headers, body, text };
    },
  };
}

/** A fresh PostgreSQL schema, reached through the connection's search_path. */
export async function freshPgSchema(): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const u = new URL(TEST_DATABASE_URL!);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
    },
  };
}

export interface TestApp extends Client {
  dataDir: string;
  db: DbHandle;
  deps: Deps;
  logs(): string;
  stop(): Promise<void>;
}

/** The app in this process: an injectable clock, direct database access, captured logs. */
export async function startApp(
  opts: {
    env?: Record<string, string>;
    clock?: Clock;
    databaseUrl?: string;
    /** Several instances on one database share the master key. */
    masterKey?: Buffer;
    /** DNS for webhook targets (D5). */
    resolve?: Resolver;
  } = {},
) {
  const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-test-'));
  const pgSchema = opts.databaseUrl === undefined && TEST_DATABASE_URL ? await freshPgSchema() : null;
  const databaseUrl = opts.databaseUrl ?? pgSchema?.url;
  const config = loadConfig({
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...opts.env,
  });
  const db = openDb({ dataDir, databaseUrl });
  await migrate(db);
  const lines: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const { app, deps } = await buildApp({
    config,
    db,
    clock: opts.clock ?? { now: () => new Date() },
    masterKey: opts.masterKey ?? randomBytes(32),
    logStream,
    ...(opts.resolve ? { resolve: opts.resolve } : {}),
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  deps.jobs.start();
  const c = client(address);
  return {
    ...c,
    dataDir,
    db,
    deps,
    logs: () => lines.join(''),
    async stop() {
      await app.close();
      await deps.jobs.stop();
      await deps.auditBatcher.drain();
      await db.close();
      await pgSchema?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  } satisfies TestApp;
}

export interface ServerProcess extends Client {
  dataDir: string;
  child: ChildProcess;
  logs(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** The real `server/src/main.ts` as a child process (CLI end-to-end, restarts, several instances). */
export async function startServer(
  opts: { env?: Record<string, string>; dataDir?: string } = {},
): Promise<ServerProcess> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'svcenv-srv-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    ...opts.env,
  };
  // Node itself with tsx as a loader, not the tsx command: that one runs the server as a grandchild, which a
  // SIGKILL of the child would leave running (and still serving) behind the test's back.
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'server', 'src', 'main.ts')], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const url = `${env.TLS_CERT_FILE ? 'https' : 'http'}://127.0.0.1:${env.PORT}`;
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${out}`))),
  );
  const deadline = Date.now() + 30_000;
  for (;;) {
    const up = await Promise.race([healthy(url), exited]);
    if (up) break;
    if (Date.now() > deadline) throw new Error(`server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    ...client(url),
    dataDir,
    child,
    logs: () => out,
    stop(signal: NodeJS.Signals = 'SIGTERM') {
      return new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      });
    },
  };
}

/** A port the kernel just handed out; the server binds it a moment later. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function healthy(url: string): Promise<boolean> {
  try {
    // The TLS test server uses a self-signed certificate; curl-free check through node's https.
    if (url.startsWith('https')) {
      return await new Promise((resolve) => {
        httpsGet(`${url}/healthz`, { rejectUnauthorized: false }, (res) => {
          res.resume();
          resolve(res.statusCode === 200);
        }).on('error', () => resolve(false));
      });
    }
    return (await fetch(`${url}/healthz`)).status === 200;
  } catch {
    return false;
  }
}

let counter = 0;
/** A new user with their own workspace; every test makes its own, so tests never share rows. */
export async function signupUser(c: Client, name = 'Ada') {
  const email = `${name.toLowerCase()}-${Date.now()}-${counter++}-${randomBytes(3).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const res = await c.request('POST', '/v1/auth/signup', { body: { name, email, password } });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
  return {
    jwt: res.body.token as string,
    user: res.body.user as { id: string; name: string; email: string },
    email,
    password,
  };
}

export async function createProject(c: Client, jwt: string, body: Record<string, unknown> = {}) {
  const res = await c.request('POST', '/v1/projects', { token: jwt, body: { name: `proj-${counter++}`, ...body } });
  if (res.status !== 201) throw new Error(`create project failed: ${res.status} ${res.text}`);
  return res.body as { id: string; name: string; envs: string[] };
}

export async function createToken(c: Client, jwt: string, body: Record<string, unknown> = {}) {
  const res = await c.request('POST', '/v1/tokens', {
    token: jwt,
    body: { name: `tok-${counter++}`, envs: ['*'], ...body },
  });
  if (res.status !== 201) throw new Error(`create token failed: ${res.status} ${res.text}`);
  return res.body as { id: string; token: string };
}

export async function upsert(c: Client, auth: string, projectId: string, envs: string[], items: object[]) {
  const res = await c.request('POST', `/v1/projects/${projectId}/vars`, { token: auth, body: { envs, items } });
  if (res.status !== 200) throw new Error(`upsert failed: ${res.status} ${res.text}`);
  return res.body as { created: string[]; updated: string[] };
}

/**
 * A raw HTTP/1.1 connection to a server, for what `fetch` cannot send (pipelined requests, malformed
 * headers, a body held back): `write` sends bytes as they are, `text()` is everything received so far.
 */
export function rawConnection(url: string) {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => {
    received += d;
  });
  socket.on('error', () => {}); // a reset shows as the close below; the test judges by what was received
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { write: (bytes: string) => socket.write(bytes), text: () => received, closed };
}
