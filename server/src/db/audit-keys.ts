import { type Expression, type RawBuilder, sql } from 'kysely';

/** As db/index.ts names it (written out: that module imports this one). */
type Dialect = 'sqlite' | 'postgres';

/**
 * D64 (ADR 0022): the audit indexes key ids and times compactly, while the rows keep the text the API shows. A
 * query reaches one of those indexes only through the very expression it was built on, so these are the only
 * spellings of them. (db/audit-writer.worker.mjs, plain JavaScript, writes the SQLite ones out in its prune
 * statement.)
 *
 * - PostgreSQL (migration 2026-11-29T00-audit-compact-keys): an id is `(id)::uuid`, its 16 bytes;
 *   `created_at` is a `timestamptz` column itself.
 * - SQLite (migration 2026-12-03T00-portable-audit-keys): an id is keyed by its last 8 characters
 *   (`substr(id, 29)`, random in every id we make), a time by its milliseconds through `julianday`. Both are
 *   built from functions of SQLite 3.40 (Debian 12's `sqlite3`, which checks a backup: D53), where `unhex` and
 *   `unixepoch(..., 'subsec')`, the keys of before, are not. A short key is not the id: `auditIdIs` pairs it
 *   with the comparison of the whole text, so the index finds the candidates and the text decides, and no
 *   caller can use one without the other.
 */
export function auditIdIs(dialect: Dialect, column: string, id: string | Expression<unknown>): RawBuilder<boolean> {
  const col = sql.ref(column);
  // The ids we store are lower case (crypto.randomUUID); the API's uuids may be written in either case, as the
  // 16-byte keys of before (and PostgreSQL's uuid) read them.
  return dialect === 'postgres'
    ? sql<boolean>`(${col})::uuid = cast(${id} as uuid)`
    : sql<boolean>`(${sqliteIdKey(col)} = ${sqliteIdKey(sql`lower(${id})`)} and ${col} = lower(${id}))`;
}
/** On PostgreSQL `created_at` is a `timestamptz` column itself. */
export function auditTimeKey(dialect: Dialect, column: string): RawBuilder<string> {
  return dialect === 'postgres' ? sql`${sql.ref(column)}` : sqliteMs(sql.ref(column));
}
export function auditTimeValue(dialect: Dialect, iso: string): RawBuilder<string> {
  return dialect === 'postgres' ? sql`cast(${iso} as timestamptz)` : sqliteMs(sql`${iso}`);
}
const sqliteIdKey = (x: Expression<unknown>): RawBuilder<string> => sql`substr(${x}, 29)`;
/**
 * Milliseconds since 1970 (6 bytes as an integer): SQLite keeps a time as whole milliseconds of the Julian day,
 * so this is exact (the product is within 1e-4 of an integer, which `round` takes).
 */
const sqliteMs = (x: Expression<unknown>): RawBuilder<string> =>
  sql`cast(round((julianday(${x}) - 2440587.5) * 86400000) as integer)`;
