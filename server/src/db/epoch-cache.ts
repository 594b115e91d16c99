import type SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** db/index.ts's Db, spelt out: index.ts enables the cache, so this module does not import it back. */
type Db = Kysely<Database>;

/**
 * Per-process cache of the rows that authentication and authorization read on every request (token,
 * session member, project, project role, environment overrides, environment), revalidated on every use.
 *
 * On SQLite, triggers bump `cache_epoch.n` in the same transaction as any insert, update or delete on the
 * tables those rows come from (migration T05), whoever writes: this server, another process on the same
 * file, the admin command. Each use first reads the counter (one single-row read, a fraction of the query
 * it replaces) and returns cached rows only if they were loaded at that same counter value; any change
 * empties the cache. So a revoked token, a removed member or a renamed environment is seen on the very
 * next request, exactly as without the cache (D9, D33).
 *
 * The counter is read synchronously on the connection that serves requests, and only while no transaction
 * is open on it: inside one (this request's or another's, between its awaits) the counter may hold an
 * uncommitted bump, so the rows are then read from the database instead. Only the root handle caches;
 * PostgreSQL has no triggers and no cache (ADR 0007).
 */
export class EpochCache {
  private epoch = -1;
  private readonly map = new Map<string, readonly unknown[]>();
  private counterQuery: SQLite.Statement<[], number> | null = null;
  private nextRead: Promise<number | undefined> | null = null;

  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly max = 50_000,
  ) {}

  /** The counter now, or undefined while a transaction is open on the connection. */
  read(): number | undefined {
    if (this.sqlite.inTransaction) return undefined;
    // Prepared on first use: the handle is opened before migrations create the table.
    this.counterQuery ??= this.sqlite.prepare<[], number>('select n from cache_epoch where id = 1').pluck();
    return this.counterQuery.get() ?? -1;
  }

  /**
   * The counter as one read made for every request that asks in this turn of the event loop: the read is
   * made at the end of the turn (`setImmediate`), so after each of those requests arrived, and therefore
   * sees every change committed before any of them (D33). A request that asks once the read is made waits
   * for the next one. Requests parsed together share the read's cost (two lock syscalls and a read
   * transaction, ~10 µs of a 304 under load; ADR 0007, seventh round).
   */
  readAfterTurn(): Promise<number | undefined> {
    this.nextRead ??= new Promise((resolve) =>
      setImmediate(() => {
        this.nextRead = null;
        resolve(this.read());
      }),
    );
    return this.nextRead;
  }

  /**
   * The rows `load` returns for `key`, from the cache if nothing changed since they were loaded: as of the
   * counter read now, or as of `at`, a value read earlier in the same read-only request.
   */
  async rows<R>(key: string, load: () => Promise<R[]>, at?: number): Promise<readonly R[]> {
    const epoch = at ?? this.read();
    if (epoch === undefined) return load();
    if (epoch !== this.epoch) {
      // The counter only grows; an older value means this read raced a change: use the database.
      if (epoch < this.epoch) return load();
      this.map.clear();
      this.epoch = epoch;
    }
    const hit = this.map.get(key);
    if (hit) return hit as readonly R[];
    // Loaded after the counter was read, so at least as new as `epoch`: safe to keep under it.
    const rows = Object.freeze((await load()).map((r) => Object.freeze(r)));
    if (this.epoch === epoch) {
      if (this.map.size >= this.max) this.map.clear();
      this.map.set(key, rows);
    }
    return rows;
  }
}

const caches = new WeakMap<Db, EpochCache>();

/** Turns the cache on for the root handle of a SQLite database (db/index.ts). */
export function enableEpochCache(db: Db, sqlite: SQLite.Database): void {
  caches.set(db, new EpochCache(sqlite));
}

/**
 * Rows a read-only request already holds under the keys `cachedRows` uses, read together with its
 * credential in one query where no cache serves them (PostgreSQL: services/identity/authn.ts).
 */
export type RowSnapshot = ReadonlyMap<string, readonly unknown[]>;

/**
 * `load()`'s rows: from `snapshot` when it holds `key`, else cached under `key` when `db` is a handle with
 * the cache on, else read directly. `at`: see `requestEpoch`. Callers must treat the rows as read-only
 * (they are frozen).
 */
export function cachedRows<R>(
  db: Db,
  key: string,
  load: () => Promise<R[]>,
  at?: number,
  snapshot?: RowSnapshot,
): Promise<readonly R[]> {
  const held = snapshot?.get(key);
  if (held) return Promise.resolve(held as readonly R[]);
  const cache = caches.get(db);
  return cache ? cache.rows(key, load, at) : load();
}

/**
 * The counter as read after this request arrived, shared with the requests that arrived with it
 * (`EpochCache.readAfterTurn`); undefined without a cache (PostgreSQL) or inside a transaction.
 */
export function readEpochAfterArrival(db: Db): Promise<number | undefined> | undefined {
  return caches.get(db)?.readAfterTurn();
}

/** The counter now (undefined without a cache or inside a transaction). */
export function readEpoch(db: Db): number | undefined {
  return caches.get(db)?.read();
}
