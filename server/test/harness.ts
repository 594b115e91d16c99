import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { type AddressInfo, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ERROR_STATUS, type ErrorBody, type ErrorCode, expandPath, loginResponse } from '@svcenv/contract';
import { type Operation, operations, type RequestOf, type ResponseOf } from '@svcenv/contract/operations';
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { z } from 'zod';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { type DbHandle, migrate, openDb } from '../src/db/index.js';
import type { Clock } from '../src/lib/clock.js';
import type { Resolver } from '../src/lib/net-guard.js';
import type { Deps } from '../src/services/core/deps.js';

/**
 * Test harness: the real server on a random loopback port with a temporary data directory, on SQLite or,
 * when TEST_DATABASE_URL is set, on a fresh PostgreSQL schema of its own (dropped at stop).
 */
const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = join(here, '..', '..');
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
export const dialectName = TEST_DATABASE_URL ? 'postgres' : 'sqlite';

/**
 * The contract's error body (contract/src/errors.ts), checked strictly: one of the listed codes, sent with
 * the one HTTP status that code has, and nothing else in the body.
 */
const errorCodes = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];
const errorBody = z.strictObject({
  error: z.strictObject({ code: z.enum(errorCodes), message: z.string(), field: z.string() }),
});
export type ApiError = ErrorBody['error'];

/** One answer. `body` and `error` are getters: each belongs to one kind of answer and throws on the other. */
export interface Res<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  /** A 2xx answer's body (parsed JSON, else the text), checked against the request's `schema`. */
  body: T;
  /** A 4xx or 5xx answer's `{code, message, field}`. */
  error: ApiError;
  /** The JSON body checked against `schema`, whatever the status (the flat pull error of spec variables rule 4). */
  json<S extends z.ZodType>(schema: S): z.output<S>;
}

export interface RequestOptions<S extends z.ZodType> {
  token?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
  /** The contract's schema of a 2xx answer's body; without one, `body` is `unknown`. */
  schema?: S;
}

/** One request of an operation: its params, query and body as its schemas take them, and extra headers. */
export type CallInput<O extends Operation> = RequestOf<O> & { headers?: Record<string, string> };

export interface Client {
  url: string;
  request<S extends z.ZodType = z.ZodUnknown>(
    method: string,
    path: string,
    opts?: RequestOptions<S>,
  ): Promise<Res<z.output<S>>>;
  /**
   * One operation of the contract (`call(operations.listVars, {params: {id, env}}, token)`): its method, its
   * path with the params filled in (each an encoded segment), the query string, and a 2xx body checked
   * against the operation's response schema for that status.
   */
  call<O extends Operation>(
    op: O,
    ...args: object extends CallInput<O>
      ? [input?: CallInput<O>, token?: string]
      : [input: CallInput<O>, token?: string]
  ): Promise<Res<ResponseOf<O>>>;
}

/** The schema of an operation's 2xx answer with a body (either, for an operation with two), if it declares one. */
function successSchema(op: Operation): z.ZodType | undefined {
  const schemas = Object.entries(op.responses ?? {})
    .filter(([status]) => status.startsWith('2') && status !== '204')
    .map(([, schema]) => schema);
  if (schemas.length < 2) return schemas[0];
  return z.union(schemas);
}

function queryString(query: object | undefined): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    for (const item of Array.isArray(v) ? v : v === undefined ? [] : [v]) qs.append(k, String(item));
  }
  const s = qs.toString();
  return s ? `?${s}` : '';
}

/**
 * `value` once `schema` accepts it, as it was sent: a parsed copy would drop the fields the schema does not
 * name, and a test must still see a field the server should not have sent. (Response schemas transform
 * nothing, so what was sent has the output type.)
 */
function checked<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new Error(
      `${what} does not match the contract schema:\n${z.prettifyError(result.error)}\n${JSON.stringify(value).slice(0, 2000)}`,
    );
  }
  return value as z.output<S>;
}

export function client(url: string): Client {
  return {
    url,
    request,
    async call<O extends Operation>(op: O, input?: CallInput<O>, token?: string) {
      const { params, query, body, headers } = (input ?? {}) as CallInput<Operation>;
      const path = expandPath(op, params ?? {}) + queryString(query);
      const res = await request(op.method, path, { token, body, headers, schema: successSchema(op) });
      return res as Res<ResponseOf<O>>;
    },
  };

  async function request<S extends z.ZodType>(method: string, path: string, opts: RequestOptions<S> = {}) {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let payload: string | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      payload = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(url + path, { method, headers, body: payload });
    const text = await res.text();
    const what = `the ${res.status} answer to ${method} ${path}`;
    const isJson = (res.headers.get('content-type') ?? '').includes('json') && text !== '';
    const parsed: unknown = isJson ? JSON.parse(text) : text;
    const ok = res.status >= 200 && res.status < 300;
    // A 2xx body is checked at once, so an answer outside the contract fails even a test that reads only the status.
    const body = ok && opts.schema ? checked(opts.schema, parsed, what) : parsed;
    const json = <J extends z.ZodType>(schema: J): z.output<J> => {
      if (!isJson) throw new Error(`${what} is not JSON: ${text}`);
      return checked(schema, parsed, what);
    };
    return {
      status: res.status,
      headers: res.headers,
      text,
      json,
      get body() {
        if (!ok) throw new Error(`${what} has no 2xx body: ${text}`);
        return body as z.output<S>;
      },
      get error() {
        if (res.status < 400) throw new Error(`${what} is not an error: ${text}`);
        const { error } = json(errorBody);
        if (ERROR_STATUS[error.code] !== res.status) throw new Error(`${what} carries code ${error.code}`);
        return error;
      },
    };
  }
}

/** The list answers of projects and environments, under the names the suites use. */
export { listEnvsResponse as envList, listProjectsResponse as projectList } from '@svcenv/contract';

/** What the tests read of the OpenAPI document (`GET /v1/openapi.json`); the rest passes unchecked. */
interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  required?: string[];
}
const jsonSchema: z.ZodType<JsonSchema> = z.lazy(() =>
  z.looseObject({ properties: z.record(z.string(), jsonSchema).optional(), required: z.array(z.string()).optional() }),
);
const securityRequirements = z.array(z.record(z.string(), z.array(z.string())));
const openApiOperation = z.looseObject({
  security: securityRequirements.optional(),
  requestBody: z.unknown().optional(),
  responses: z.record(
    z.string(),
    z.looseObject({
      description: z.string(),
      content: z.record(z.string(), z.looseObject({ schema: jsonSchema })).optional(),
    }),
  ),
});
export const openApiDocument = z.looseObject({
  openapi: z.string(),
  security: securityRequirements,
  paths: z.record(z.string(), z.record(z.string(), openApiOperation)),
});

/** Every operation the OpenAPI document lists; `public` when it needs no credential (`security: []`). */
export async function apiOperations(c: Client) {
  const res = await c.request('GET', operations.openapi.path, { schema: openApiDocument });
  if (res.status !== 200) throw new Error(`openapi.json: ${res.status} ${res.text}`);
  return Object.entries(res.body.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      public: op.security?.length === 0,
    })),
  );
}

/** The two answers of a login (contract `loginResponse`): a session, or the two-factor challenge. */
export const [loginSession, loginChallenge] = loginResponse.options;

/** A fresh PostgreSQL schema, reached through the connection's search_path. */
export async function freshPgSchema(base = TEST_DATABASE_URL): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const u = new URL(base!);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
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
    /** Another app's data directory: two instances on one SQLite database (kept at stop). */
    dataDir?: string;
  } = {},
) {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'svcenv-test-'));
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
      await deps.engines.close();
      await deps.auditBatcher.drain();
      await deps.writeGroup.drain();
      await db.close();
      await pgSchema?.drop();
      if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  } satisfies TestApp;
}

export interface ServerProcess extends Client {
  dataDir: string;
  child: ChildProcess;
  logs(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * The real `server/src/main.ts` as a child process (CLI end-to-end, restarts, several instances).
 * `command` replaces how it is started: the benchmarks run what `npm start` runs (dist/server/main.mjs with
 * plain Node, `nodeArgs` such as `--cpu-prof` before it) and, for a comparison in the same run, another
 * checkout of the repository (`cwd`).
 */
export async function startServer(
  opts: {
    env?: Record<string, string>;
    dataDir?: string;
    /** `file` (default: this Node) with `args`; a benchmark runs the server under a tool such as valgrind. */
    command?: { file?: string; args: string[]; cwd?: string };
    startTimeoutMs?: number;
  } = {},
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
  const args = opts.command?.args ?? ['--import', 'tsx', join(repoRoot, 'server', 'src', 'main.ts')];
  const child = spawn(opts.command?.file ?? process.execPath, args, {
    cwd: opts.command?.cwd ?? repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // A benchmark's server logs a line per request for minutes: past LOG_KEEP characters only the newest are
  // kept (a string cannot grow without bound), and the text says so. No test's server comes near it.
  const LOG_KEEP = 128 * 1024 * 1024;
  const keep = (d: Buffer) => {
    out += d;
    if (out.length > LOG_KEEP) out = `[earlier output dropped]\n${out.slice(-LOG_KEEP / 2)}`;
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const url = `${env.TLS_CERT_FILE ? 'https' : 'http'}://127.0.0.1:${env.PORT}`;
  const exited = new Promise<never>((_, reject) =>
    child.on('exit', (code) => reject(new Error(`server exited with ${code}:\n${out}`))),
  );
  const deadline = Date.now() + (opts.startTimeoutMs ?? 30_000);
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
        // Ended already (an exit code, or killed by a signal: a failpoint's SIGKILL).
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      });
    },
  };
}

/** A pull's audit entry as the group commit and the audit inbox receive it (services/core/audit.ts). */
export const pullAuditRow = (workspaceId: string, projectId: string | null, key: string, at = new Date()) => ({
  workspace_id: workspaceId,
  project_id: projectId,
  action: 'vars.pull',
  target_key: key,
  target_env: 'dev',
  actor_id: null,
  actor_type: 'token' as const,
  detail: null,
  created_at: at.toISOString(),
});

/** Polls `ok` every 25 ms until it holds; fails naming `what` after `ms`. */
export async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
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
        httpsGet(`${url}${operations.healthz.path}`, { rejectUnauthorized: false }, (res) => {
          res.resume();
          resolve(res.statusCode === 200);
        }).on('error', () => resolve(false));
      });
    }
    return (await fetch(`${url}${operations.healthz.path}`)).status === 200;
  } catch {
    return false;
  }
}

let counter = 0;
/** A new user with their own workspace; every test makes its own, so tests never share rows. */
export async function signupUser(c: Client, name = 'Ada') {
  const email = `${name.toLowerCase()}-${Date.now()}-${counter++}-${randomBytes(3).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const res = await c.call(operations.signup, { body: { name, email, password } });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
  return { jwt: res.body.token, user: res.body.user, email, password };
}

export async function createProject(c: Client, jwt: string, body: Record<string, unknown> = {}) {
  const res = await c.call(operations.createProject, { body: { name: `proj-${counter++}`, ...body } }, jwt);
  if (res.status !== 201) throw new Error(`create project failed: ${res.status} ${res.text}`);
  return res.body;
}

export async function createToken(c: Client, jwt: string, body: Record<string, unknown> = {}) {
  const res = await c.call(
    operations.createToken,
    { body: { name: `tok-${counter++}`, envs: ['*'], ...body } as RequestOf<typeof operations.createToken>['body'] },
    jwt,
  );
  if (res.status !== 201) throw new Error(`create token failed: ${res.status} ${res.text}`);
  return res.body;
}

export async function upsert(c: Client, auth: string, projectId: string, envs: string[], items: object[]) {
  const res = await c.call(
    operations.bulkUpsert,
    { params: { id: projectId }, body: { envs, items } as RequestOf<typeof operations.bulkUpsert>['body'] },
    auth,
  );
  if (res.status !== 200) throw new Error(`upsert failed: ${res.status} ${res.text}`);
  return res.body;
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
  return { write: (bytes: string) => socket.write(bytes), text: () => received, closed, end: () => socket.end() };
}

/**
 * The plan the database makes for `query`: SQLite's EXPLAIN QUERY PLAN lines, or PostgreSQL's EXPLAIN text.
 * `forceIndexes` (PostgreSQL): plans as if the table were large, so a test on a few rows sees whether an index
 * can serve the query (a sequential scan or a sort is then only chosen when nothing else can do it).
 */
export async function explainPlan(
  handle: DbHandle,
  query: { compile(): { sql: string; parameters: readonly unknown[] } },
  opts: { forceIndexes?: boolean } = {},
): Promise<string> {
  const c = query.compile();
  if (handle.dialect === 'sqlite') {
    const r = await handle.db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${c.sql}`, [...c.parameters]),
    );
    return r.rows.map((x) => x.detail).join('\n');
  }
  return handle.db.transaction().execute(async (trx) => {
    if (opts.forceIndexes) {
      for (const s of ['enable_seqscan', 'enable_sort', 'enable_bitmapscan']) {
        await trx.executeQuery(CompiledQuery.raw(`set local ${s} = off`, []));
      }
    }
    const r = await trx.executeQuery<{ 'QUERY PLAN': string }>(
      CompiledQuery.raw(`explain ${c.sql}`, [...c.parameters]),
    );
    return r.rows.map((x) => x['QUERY PLAN']).join('\n');
  });
}
