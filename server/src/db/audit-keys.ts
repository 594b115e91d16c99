import { type Expression, type RawBuilder, sql } from 'kysely';

/** As db/index.ts names it (written out: that module imports this one). */
type Dialect = 'sqlite' | 'postgres';

/**
 * D64 (ADR 0022): the audit indexes key ids by their 16 bytes and times by a number (migration
 * 2026-11-29T00-audit-compact-keys), while the rows keep the text the API shows. A query reaches one of those
 * indexes only through the very expression it was built on, so these are the only spellings of them: `...Key`
 * for a column, `...Value` for what it is compared with. (db/audit-writer.worker.mjs, plain JavaScript,
 * writes the SQLite ones out in its prune statement.)
 */
export function auditIdKey(dialect: Dialect, column: string): RawBuilder<string> {
  return dialect === 'postgres' ? sql`(${sql.ref(column)})::uuid` : sql`unhex(${sql.ref(column)}, '-')`;
}
export function auditIdValue(dialect: Dialect, id: string | Expression<unknown>): RawBuilder<string> {
  // On SQLite a text that is no id gives NULL, which matches nothing; the API lets only uuids through.
  return dialect === 'postgres' ? sql`cast(${id} as uuid)` : sql`unhex(${id}, '-')`;
}
/** On PostgreSQL `created_at` is a `timestamptz` column itself. */
export function auditTimeKey(dialect: Dialect, column: string): RawBuilder<string> {
  return dialect === 'postgres' ? sql`${sql.ref(column)}` : sqliteMs(sql.ref(column));
}
export function auditTimeValue(dialect: Dialect, iso: string): RawBuilder<string> {
  return dialect === 'postgres' ? sql`cast(${iso} as timestamptz)` : sqliteMs(sql`${iso}`);
}
const sqliteMs = (x: Expression<unknown>): RawBuilder<string> =>
  sql`cast(round(unixepoch(${x}, 'subsec') * 1000) as integer)`;
