import { chmodSync, closeSync, existsSync, fsync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import {
  type Insertable,
  Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  PostgresDialect,
  type SqliteDatabase,
  SqliteDialect,
  sql,
} from 'kysely';
import pg from 'pg';
import { auditIdIs } from './audit-keys.js';
import { enableEpochCache } from './epoch-cache.js';
import { type HotQueryRunner, runHotQueriesWith } from './hot-query.js';
import * as initial from './migrations/2026-11-22T00-initial.js';
import * as jobs from './migrations/2026-11-22T01-jobs.js';
import * as accountSecurity from './migrations/2026-11-22T02-account-security.js';
import * as events from './migrations/2026-11-22T03-events.js';
import * as teams from './migrations/2026-11-22T04-teams.js';
import * as cacheEpoch from './migrations/2026-11-22T05-cache-epoch.js';
import * as settleStaleInvites from './migrations/2026-11-23T06-settle-stale-invites.js';
import * as jobLanes from './migrations/2026-11-24T07-job-lanes.js';
import * as passwordResets from './migrations/2026-11-25T00-password-resets.js';
import * as envRevisions from './migrations/2026-11-25T02-env-revisions.js';
import * as changeRequests from './migrations/2026-11-25T03-change-requests.js';
import * as projectSlugs from './migrations/2026-11-25T04-project-slugs.js';
import * as auditSearch from './migrations/2026-11-27T00-audit-search.js';
import * as workloadIdentities from './migrations/2026-11-27T00-workload-identities.js';
import * as auditStreams from './migrations/2026-11-27T20-audit-streams.js';
import * as instanceAdmin from './migrations/2026-11-28T00-instance-admin.js';
import * as webhookProject from './migrations/2026-11-28T00-webhook-project.js';
import * as unchangedPullAudits from './migrations/2026-11-28T20-unchanged-pull-audits.js';
import * as auditCompactKeys from './migrations/2026-11-29T00-audit-compact-keys.js';
import * as singleSignOn from './migrations/2026-11-29T00-single-sign-on.js';
import * as auditInbox from './migrations/2026-11-29T10-audit-inbox.js';
import * as auditInboxUnchecked from './migrations/2026-11-29T20-audit-inbox-unchecked.js';
import * as managedCredentials from './migrations/2026-12-03T00-managed-credentials.js';
import * as portableAuditKeys from './migrations/2026-12-03T00-portable-audit-keys.js';
import * as temporaryAccess from './migrations/2026-12-03T10-temporary-access.js';
import * as personalOverrides from './migrations/2026-12-03T11-personal-overrides.js';
import { preparedNames } from './prepared-names.js';
import type { AuditLogsTable, Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';
export type Db = Kysely<Database>;

/**
 * The fsync after a transactionSyncedOffThread COMMIT failed (an I/O error): the transaction committed, but
 * is not known to be durable. Its jobs fail; they are not run again.
 */
export class WalSyncError extends Error {
  constructor(cause: unknown) {
    super('the database file could not be synced to disk', { cause });
    this.name = 'WalSyncError';
  }
}

export interface DbHandle {
  db: Db;
  dialect: Dialect;
  /**
   * Inserts audit rows in one durable transaction (on SQLite in a worker thread, so the fsync blocks no
   * request) into the audit inbox (migration 2026-11-29T10-audit-inbox), from which they reach `audit_logs` a
   * few hundred at a time or at the next flushAuditInbox of any instance.
   */
  insertAuditRows(rows: Insertable<AuditLogsTable>[]): Promise<void>;
  /**
   * Called before reading `audit_logs` (outside any transaction): every entry committed to the audit inbox, by
   * any instance, before it was called is in `audit_logs` when it resolves. On SQLite the writer thread moves
   * the inbox; on PostgreSQL a transaction of its own, behind the moves of every other instance.
   */
  flushAuditInbox(): Promise<void>;
  /**
   * D64: deletes up to `limit` of the workspace's oldest entries written before `cutoff`, in one short
   * transaction (on SQLite in the audit writer's thread, between its group commits); returns how many.
   */
  pruneAuditBatch(workspaceId: string, cutoff: string, limit: number): Promise<number>;
  /**
   * SQLite only: a write transaction whose fsync blocks no request (runtime/write-group.ts). It runs with
   * synchronous=NORMAL, so its COMMIT writes the WAL without an fsync, on the connection held for it alone
   * (no other statement runs under NORMAL; FULL again before the connection is let go); then the WAL file is
   * fsynced on libuv's thread pool, and only then does this resolve. What the caller acknowledges after it
   * survives power loss, as with synchronous=FULL. Other statements may read its rows during that fsync.
   */
  transactionSyncedOffThread?<T>(body: (trx: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Bigint columns (audit and history ids) come back as numbers; they stay far below 2^53. */
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
/**
 * `timestamptz` columns (only audit_logs.created_at, migration 2026-11-29T00-audit-compact-keys) come back as
 * the `Date#toISOString` text every other time column holds, whatever the session's time zone.
 */
const parseTimestamptz = pg.types.getTypeParser(1184);
pg.types.setTypeParser(1184, (v) => (parseTimestamptz(v) as Date).toISOString());

/** audit_logs' columns as the writers insert them (the id is generated). */
const AUDIT_COLUMNS = [
  'workspace_id',
  'project_id',
  'action',
  'target_key',
  'target_env',
  'actor_id',
  'actor_type',
  'detail',
  'created_at',
] as const satisfies readonly (keyof Insertable<AuditLogsTable>)[];

/**
 * PostgreSQL's audit group commit: a batch of any size as one array per column, so the statement's text never
 * changes and it runs as a named prepared statement, on the pool as the hot queries do (db/hot-query.ts): a
 * batch costs PostgreSQL no parse or plan, and the server no query building (a multi-row VALUES list had a new
 * text for every batch size).
 */
const PG_AUDIT_INSERT = `insert into audit_inbox (${AUDIT_COLUMNS.join(', ')}) select * from unnest(${AUDIT_COLUMNS.map(
  (c, i) => `$${i + 1}::${c === 'created_at' ? 'timestamptz' : 'text'}[]`,
).join(', ')})`;
const PG_AUDIT_INSERT_NAME = 'svcenv_audit_inbox_insert';
/** PostgreSQL's error code for a lock wait past `lock_timeout`. */
const LOCK_NOT_AVAILABLE = '55P03';
/** PostgreSQL's error code for a row whose parent (its foreign key's row) is missing. */
const FOREIGN_KEY_VIOLATION = '23503';
/**
 * Connections of the pool that runs the hot queries and the audit inbox's inserts: two coalesced reads in
 * flight per hot query (db/hot-query.ts) and the audit commits in flight; more wait in the pool's queue.
 */
const HOT_POOL_MAX = 4;
/** Rows an instance commits to the audit inbox before it moves the inbox by itself (the writer thread's MOVE_AT). */
const PG_AUDIT_MOVE_AT = 512;

function pgAuditArrays(rows: Insertable<AuditLogsTable>[]): unknown[] {
  return AUDIT_COLUMNS.map((c) => rows.map((r) => r[c] ?? null));
}

/**
 * Opens the embedded SQLite database in `dataDir` (D1) or PostgreSQL at `databaseUrl` (D2).
 * SQLite runs in WAL mode with synchronous=FULL: an acknowledged write survives power loss (the write group's
 * batches commit at NORMAL and fsync the WAL themselves before they acknowledge: transactionSyncedOffThread).
 */
export function openDb(opts: {
  dataDir: string;
  databaseUrl?: string | undefined;
  /**
   * PostgreSQL: an idle pooled connection was closed from the other end (a restart or failover of the
   * database, `pg_terminate_backend`, a proxy's timeout). The pool has already dropped it and opens a new one
   * on next use; this only reports it.
   */
  onConnectionLost?: (message: string) => void;
}): DbHandle {
  if (opts.databaseUrl) {
    // Two pools, so that only the hot queries are planned generically (preparePooledConnection): Kysely's
    // queries (10 connections, shared with the job runner: ADR 0010), and the hot queries with the audit
    // inbox's inserts (HOT_POOL_MAX). Both are set up before they hand a new connection out (pg-pool's
    // onConnect).
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: 10,
      onConnect: (client) => preparePooledConnection(client, { genericPlans: false }),
    });
    const hotPool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: HOT_POOL_MAX,
      onConnect: (client) => preparePooledConnection(client, { genericPlans: true }),
    });
    // Without a listener, pg-pool's 'error' event (an idle connection closed by the database) would end the
    // process: every instance would stop at once when the database restarts.
    for (const p of [pool, hotPool]) p.on('error', (e) => opts.onConnectionLost?.(e.message));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    runHotQueriesWith(db, pgHotQuery(hotPool));
    // The audit inbox (migration 2026-11-29T10-audit-inbox, ADR 0007). Moves of every instance take one
    // advisory lock per schema, so they run one at a time: a flush that waited for another instance's move
    // then sees its rows in audit_logs, and two deletes of the same rows never deadlock.
    // The inbox has no foreign keys (migration 2026-11-29T20-audit-inbox-unchecked): a move takes the entries
    // whose workspace and project still exist and drops the others, as the cascade of their deletion would
    // have. A parent deleted while the move runs is still seen by the move's read, and the insert's foreign
    // key check then waits for the deletion and fails (23503): the move gives up, releasing its rows, and is
    // made again, now without that parent's entries. A lock wait past 200 ms gives up the same way, so a move
    // never holds up a user's deletion for long (server/test/audit-inbox.test.ts holds a project's lock).
    const columns = sql.raw(AUDIT_COLUMNS.join(', '));
    const moveOnce = () =>
      db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtext(current_schema() || '.audit_inbox'))`.execute(trx);
        await sql`set local lock_timeout = '200ms'`.execute(trx);
        await sql`with moved as (delete from audit_inbox returning id, ${columns})
          insert into audit_logs (${columns}) select ${columns} from moved m
          where exists (select 1 from workspaces w where w.id = m.workspace_id)
            and (m.project_id is null or exists (select 1 from projects p where p.id = m.project_id))
          order by id`.execute(trx);
      });
    const moveInbox = async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await moveOnce();
        } catch (e) {
          const code = (e as { code?: string }).code;
          if ((code !== LOCK_NOT_AVAILABLE && code !== FOREIGN_KEY_VIOLATION) || attempt === 10) throw e;
        }
      }
    };
    let sinceMove = 0;
    let moving: Promise<void> | null = null;
    let lastPrune: { workspaceId: string; cutoff: string; createdAt: string } | null = null;
    return {
      db,
      dialect: 'postgres',
      insertAuditRows: async (rows) => {
        await hotPool.query({ name: PG_AUDIT_INSERT_NAME, text: PG_AUDIT_INSERT, values: pgAuditArrays(rows) });
        sinceMove += rows.length;
        if (sinceMove >= PG_AUDIT_MOVE_AT && !moving) {
          sinceMove = 0;
          // Not awaited: the rows are committed and their requests answered. A failed move leaves the inbox
          // whole for the next one, and the next reader's flush reports the failure.
          moving = moveInbox()
            .catch(() => {})
            .finally(() => {
              moving = null;
            });
        }
      },
      flushAuditInbox: moveInbox,
      pruneAuditBatch: async (workspaceId, cutoff, limit) => {
        // PostgreSQL keeps a deleted entry in the indexes until vacuum, so each batch of a run would walk
        // every entry the run deleted before it (a 100-row batch took 20 ms after 377,000: bench/audit.bench.ts).
        // The previous batch of the same run (same workspace and cutoff) deleted everything before its latest
        // time, so the next starts there.
        const from = lastPrune?.workspaceId === workspaceId && lastPrune.cutoff === cutoff ? lastPrune.createdAt : null;
        const deleted = await db
          .deleteFrom('audit_logs')
          .where('id', 'in', (eb) => {
            let q = eb
              .selectFrom('audit_logs')
              .select('id')
              .where(auditIdIs('postgres', 'workspace_id', workspaceId))
              .where('created_at', '<', cutoff);
            if (from !== null) q = q.where('created_at', '>=', from);
            return q.orderBy('created_at').limit(limit);
          })
          .returning('created_at')
          .execute();
        const latest = deleted.reduce<string | null>(
          (m, r) => (m === null || r.created_at > m ? r.created_at : m),
          null,
        );
        if (latest !== null) lastPrune = { workspaceId, cutoff, createdAt: latest };
        return deleted.length;
      },
      async close() {
        await moving;
        await db.destroy();
        await hotPool.end();
      },
    };
  }
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const file = join(opts.dataDir, 'svcenv.db');
  // Owner-only, like the master key beside it: created 0600 before SQLite opens it, and an older file
  // tightened. SQLite gives the -wal and -shm files it creates the database file's mode.
  closeSync(openSync(file, 'a', 0o600));
  for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  // Above the audit writer's 5,000 (db/audit-writer.worker.mjs): under read load that thread, not the one
  // serving requests, runs the checkpoints; this is the safety net for a server that only writes.
  sqlite.pragma('wal_autocheckpoint = 10000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  enableEpochCache(db, sqlite);
  const writer = new AuditWorker(file);
  // The WAL file's own descriptor, for its fsync: Linux and macOS flush a file's data whichever descriptor
  // wrote it. The -wal file (WAL mode above made it) keeps its inode while a connection is open: a checkpoint
  // restarts or truncates it, never replaces it.
  let walFd: number | null = null;
  const syncWal = () => {
    walFd ??= openSync(`${file}-wal`, 'r');
    const fd = walFd;
    return new Promise<void>((resolve, reject) => fsync(fd, (e) => (e ? reject(e) : resolve())));
  };
  // Prepared once: better-sqlite3's pragma() parses its statement at every call, twice per batch here.
  const syncNormal = sqlite.prepare('PRAGMA synchronous = NORMAL');
  const syncFull = sqlite.prepare('PRAGMA synchronous = FULL');
  return {
    db,
    dialect: 'sqlite',
    insertAuditRows: (rows) => writer.insert(rows),
    flushAuditInbox: () => writer.flush(),
    pruneAuditBatch: (workspaceId, cutoff, limit) => writer.prune(workspaceId, cutoff, limit),
    async transactionSyncedOffThread(body) {
      const value = await db.connection().execute(async (conn) => {
        // SQLite refuses to change the level inside a transaction; the connection is ours until this returns.
        syncNormal.run();
        try {
          return await conn.transaction().execute(body);
        } finally {
          // FULL again even when the rollback throws: no later statement may commit at NORMAL.
          try {
            if (sqlite.inTransaction) sqlite.exec('rollback');
          } finally {
            syncFull.run();
          }
        }
      });
      // Committed already: a failed fsync must not make a caller run its job again.
      await syncWal().catch((e: unknown) => {
        throw new WalSyncError(e);
      });
      return value;
    },
    async close() {
      await writer.close();
      await db.destroy();
      if (walFd !== null) closeSync(walFd);
      walFd = null;
    },
  };
}

/**
 * Sets up a pooled connection before its first use. Runs the hot queries (db/hot-query.ts) as named prepared
 * statements on it: `pg` parses a named statement once per connection and PostgreSQL plans it once, so a
 * request pays execution only. Every other query goes as before (unnamed), parsed and planned at each run.
 * PgBouncer in transaction mode needs `max_prepared_statements` (1.21 and later), as for any client that
 * prepares.
 *
 * `genericPlans` (the hot pool only) forces the generic plan: left to choose, PostgreSQL keeps planning a
 * coalesced read (its arguments are arrays) anew at every run, because a plan made for a 4-element array
 * looks cheaper than the generic one. That planning took ~1.5 ms of a 0.1 ms read here; the generic plan is
 * the same chain of index lookups. The hot queries are all lookups by key, whose plan does not depend on the
 * values. The setting holds for every statement with parameters on the connection, unnamed ones too, so it
 * stays off the pool Kysely uses: there a plan made without the values (a `limit` or a time bound taken as
 * unknown) took 58 ms instead of 8 ms for an audit page at 2 million entries (ADR 0007, twelfth round).
 *
 * JIT compilation is off. PostgreSQL compiles a statement whose estimated cost passes `jit_above_cost`, and
 * the audit inbox's move (512 rows into an indexed table) passes it: it spent ~20 ms of a ~42 ms move in the
 * compiler, ~40 µs of database CPU per pull, and a backend's first compile also loads LLVM (~80 ms). Every
 * statement this service sends is a short lookup or a bounded write that JIT cannot repay (ADR 0007,
 * twelfth round).
 */
async function preparePooledConnection(client: pg.ClientBase, opts: { genericPlans: boolean }): Promise<void> {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  // Done before the pool hands the connection out: a query sent while another runs on the same client is
  // deprecated by pg 8 and an error in pg 9. A failure (PostgreSQL before 12 has no such setting) leaves the
  // default, slower but correct.
  if (opts.genericPlans) {
    await (query('set plan_cache_mode = force_generic_plan') as Promise<unknown>).catch(() => {});
  }
  await (query('set jit = off') as Promise<unknown>).catch(() => {});
  client.query = ((text: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof text === 'string' && Array.isArray(values) ? preparedNames.get(text) : undefined;
    if (name) return query({ name, text, values }, callback);
    return callback === undefined ? query(text, values) : query(text, values, callback);
  }) as typeof client.query;
}

/**
 * PostgreSQL's hot queries (db/hot-query.ts) on the pool, each row as one JSON text: `pg` describes and parses
 * every column of every result (the pull's authorization read has 34; ~15 µs of a ~50 µs read here), V8 parses
 * one JSON text in a fraction of that (ADR 0007). `row_to_json` renders text as JSON strings and integers as
 * numbers, as `pg`'s parsers give them (int8 too, db/index.ts); a hot query reads no timestamptz or bytea,
 * which it would render otherwise (server/test/hot-query.test.ts compares with Kysely's rows). Prepared under
 * a name of its own: a transaction runs the plain text under the query's name on Kysely's connections.
 */
function pgHotQuery(pool: pg.Pool): HotQueryRunner {
  return (sql, name) => {
    const query = { name: `${name}_json`, text: `select row_to_json(hot)::text from (${sql}) hot`, rowMode: 'array' };
    return async (values) =>
      (await pool.query<[string]>({ ...query, values })).rows.map((r) => JSON.parse(r[0]) as unknown);
  };
}

/** Client side of db/audit-writer.worker.mjs; the worker starts on first use (after migrations ran). */
class AuditWorker {
  private worker: Worker | null = null;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (n: number) => void; reject: (e: Error) => void }>();
  constructor(private readonly file: string) {}

  insert(rows: Insertable<AuditLogsTable>[]): Promise<void> {
    return this.send({ rows }).then(() => undefined);
  }

  flush(): Promise<void> {
    return this.send({ flush: true }).then(() => undefined);
  }

  prune(workspaceId: string, cutoff: string, limit: number): Promise<number> {
    return this.send({ prune: { workspaceId, cutoff, limit } });
  }

  private send(message: object): Promise<number> {
    if (!this.worker) {
      this.worker = new Worker(new URL('./audit-writer.worker.mjs', import.meta.url), {
        workerData: { file: this.file },
      });
      this.worker.on('message', (m: { ids: number[]; ok: boolean; n?: number; message?: string }) => {
        for (const id of m.ids) {
          const p = this.pending.get(id);
          this.pending.delete(id);
          if (m.ok) p?.resolve(m.n ?? 0);
          else p?.reject(new Error(`audit write failed: ${m.message}`));
        }
      });
      this.worker.on('error', (e) => {
        for (const p of this.pending.values()) p.reject(e);
        this.pending.clear();
        this.worker = null;
      });
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker!.postMessage({ id, ...message });
    });
  }

  async close(): Promise<void> {
    // Moves what waits in the inbox (best effort: a server that stops without it, or is killed, leaves the rows
    // there, committed, for the next process's first flush).
    if (this.worker) await this.flush().catch(() => {});
    await this.worker?.terminate();
    this.worker = null;
  }
}

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than running a small indexed query,
 * so prepared statements are kept by SQL text (bounded: the app issues a fixed set of query shapes, plus
 * `IN (...)` lists of varying length). Every statement passes here, so this is also where transactions are
 * made to begin immediate (see below).
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      // Kysely opens transactions with a deferred `begin`. One that has read and then writes while another
      // connection (the audit writer thread, a second process) holds the write lock gets SQLITE_BUSY at
      // once, without the busy timeout, and the request a 500; `begin immediate` takes the write lock first,
      // waiting up to busy_timeout for it (server/test/server-process.test.ts holds the lock to prove it).
      if (sql === 'begin') sql = 'begin immediate';
      let stmt = cache.get(sql);
      if (!stmt) {
        stmt = sqlite.prepare(sql);
        if (cache.size >= 500) cache.delete(cache.keys().next().value as string);
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}

/** Migrations are bundled (imported), so they run from any working directory (guide convention 13). */
function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '2026-11-22T00-initial': { up: (db) => initial.up(db, dialect), down: initial.down },
    '2026-11-22T01-jobs': { up: (db) => jobs.up(db, dialect), down: jobs.down },
    '2026-11-22T02-account-security': { up: (db) => accountSecurity.up(db, dialect), down: accountSecurity.down },
    '2026-11-22T03-events': { up: (db) => events.up(db, dialect), down: events.down },
    '2026-11-22T04-teams': { up: (db) => teams.up(db), down: teams.down },
    '2026-11-22T05-cache-epoch': { up: (db) => cacheEpoch.up(db, dialect), down: cacheEpoch.down },
    '2026-11-23T06-settle-stale-invites': { up: settleStaleInvites.up, down: settleStaleInvites.down },
    '2026-11-24T07-job-lanes': { up: jobLanes.up, down: jobLanes.down },
    '2026-11-25T00-password-resets': { up: passwordResets.up, down: passwordResets.down },
    '2026-11-25T02-env-revisions': { up: envRevisions.up, down: envRevisions.down },
    '2026-11-25T03-change-requests': { up: changeRequests.up, down: changeRequests.down },
    '2026-11-25T04-project-slugs': { up: projectSlugs.up, down: projectSlugs.down },
    '2026-11-27T00-workload-identities': {
      up: (db) => workloadIdentities.up(db, dialect),
      down: workloadIdentities.down,
    },
    '2026-11-27T00-audit-search': { up: (db) => auditSearch.up(db, dialect), down: auditSearch.down },
    '2026-11-27T20-audit-streams': { up: (db) => auditStreams.up(db, dialect), down: auditStreams.down },
    '2026-11-28T00-webhook-project': { up: webhookProject.up, down: webhookProject.down },
    '2026-11-28T20-unchanged-pull-audits': { up: unchangedPullAudits.up, down: unchangedPullAudits.down },
    '2026-11-28T00-instance-admin': { up: instanceAdmin.up, down: instanceAdmin.down },
    '2026-11-29T00-audit-compact-keys': {
      up: (db) => auditCompactKeys.up(db, dialect),
      down: (db) => auditCompactKeys.down(db, dialect),
    },
    '2026-11-29T00-single-sign-on': { up: singleSignOn.up, down: singleSignOn.down },
    '2026-11-29T10-audit-inbox': { up: (db) => auditInbox.up(db, dialect), down: auditInbox.down },
    '2026-11-29T20-audit-inbox-unchecked': {
      up: (db) => auditInboxUnchecked.up(db, dialect),
      down: (db) => auditInboxUnchecked.down(db, dialect),
    },
    '2026-12-03T00-managed-credentials': { up: managedCredentials.up, down: managedCredentials.down },
    '2026-12-03T00-portable-audit-keys': {
      up: (db) => portableAuditKeys.up(db, dialect),
      down: (db) => portableAuditKeys.down(db, dialect),
    },
    '2026-12-03T10-temporary-access': { up: temporaryAccess.up, down: temporaryAccess.down },
    '2026-12-03T11-personal-overrides': { up: personalOverrides.up, down: personalOverrides.down },
  };
}

export async function migrate(handle: DbHandle): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(handle.dialect) };
  // On PostgreSQL the migration bookkeeping lives in the connection's own schema (search_path), so that
  // Kysely does not mistake another schema's tables for ours.
  const migrationTableSchema =
    handle.dialect === 'postgres'
      ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(handle.db)).rows[0]?.schema
      : undefined;
  const { error, results } = await new Migrator({
    db: handle.db,
    provider,
    // Work lands from parallel branches whose dated migrations interleave; each one is independent, so an
    // earlier-named migration that arrives later still applies on an existing database.
    allowUnorderedMigrations: true,
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`database migration ${failed ?? ''} failed: ${(error as Error).message}`);
  }
}
