import { type Kysely, sql } from 'kysely';

/** The database this runs on, written out here: a migration imports nothing of the application. */
type Dialect = 'sqlite' | 'postgres';

/**
 * D64 (ADR 0022, "Size"): the nine audit indexes key ids by their 16 bytes and times by a number, instead of
 * the 36-character text of an id and the 24-character text of a time. They held three quarters of an entry's
 * bytes (an audited pull cost ~1,090 bytes on SQLite, ~1,800 on PostgreSQL); the rows keep the text the API
 * shows, the foreign keys and every writer as they were.
 *
 * - SQLite: an id is `unhex(id, '-')` (16 bytes; NULL for a text that is not one, which then matches
 *   nothing), a time `cast(round(unixepoch(t, 'subsec') * 1000) as integer)` (milliseconds, 6 bytes). No row
 *   is rewritten.
 * - PostgreSQL: an id is `(id)::uuid`, and `created_at` itself becomes `timestamptz` (8 bytes, in the row as
 *   well; its values are `Date#toISOString` instants, which it holds exactly). The table is rewritten once.
 * - `audit_logs_project_at` keeps `project_id` as it is: a project's deletion cascades to its entries through
 *   the foreign key, whose lookup (`project_id = ?`) only a plain column can serve.
 *
 * Queries reach these indexes only through these exact expressions (db/audit-keys.ts). Frozen in time:
 * Kysely<any>, no app imports (guide convention 13).
 */
const KEYS: [string, string[]][] = [
  ['audit_logs_ws_at', ['#workspace_id', '@created_at']],
  ['audit_logs_ws_action_at', ['#workspace_id', 'action', '@created_at']],
  ['audit_logs_ws_actor_at', ['#workspace_id', '#actor_id', '@created_at']],
  ['audit_logs_ws_actor_action_at', ['#workspace_id', '#actor_id', 'action', '@created_at']],
  ['audit_logs_project_at', ['project_id', '@created_at']],
  ['audit_logs_project_action_at', ['#project_id', 'action', '@created_at']],
  ['audit_logs_project_actor_at', ['#project_id', '#actor_id', '@created_at']],
  ['audit_logs_project_actor_action_at', ['#project_id', '#actor_id', 'action', '@created_at']],
  // D65: a stream reads its workspace's entries in id order.
  ['audit_logs_ws_id', ['#workspace_id']],
];

/** The indexes as migrations 2026-11-27T00-audit-search and 2026-11-27T20-audit-streams made them. */
const TEXT_KEYS: [string, string[]][] = KEYS.map(([name, cols]) => [name, cols.map((c) => c.replace(/^[#@]/, ''))]);

function keyExpression(dialect: Dialect, column: string): string {
  const name = column.slice(1);
  if (column.startsWith('#')) return dialect === 'postgres' ? `((${name})::uuid)` : `unhex(${name}, '-')`;
  if (column.startsWith('@')) {
    return dialect === 'postgres' ? name : `cast(round(unixepoch(${name}, 'subsec') * 1000) as integer)`;
  }
  return column;
}

/**
 * PostgreSQL gets `id` as the last column of each. SQLite appends the rowid (`id`) to every index entry
 * itself, which orders and bounds as a last column would, so the compact keys do not list it (the text ones
 * had it in `audit_logs_ws_id`).
 */
async function createIndexes(db: Kysely<any>, dialect: Dialect, keys: [string, string[]][], compact: boolean) {
  for (const [name, columns] of keys) {
    const parts = columns.map((c) => (compact ? keyExpression(dialect, c) : c));
    if (dialect === 'postgres' || (!compact && name === 'audit_logs_ws_id')) parts.push('id');
    await sql.raw(`create index ${name} on audit_logs (${parts.join(', ')})`).execute(db);
  }
}

async function dropIndexes(db: Kysely<any>) {
  for (const [name] of KEYS) await sql.raw(`drop index ${name}`).execute(db);
}

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await dropIndexes(db);
  if (dialect === 'postgres') {
    await sql`alter table audit_logs alter column created_at type timestamptz using created_at::timestamptz`.execute(
      db,
    );
  }
  await createIndexes(db, dialect, KEYS, true);
}

/** Back to the text keys (and, on PostgreSQL, `created_at` as `Date#toISOString` text). */
export async function down(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await dropIndexes(db);
  if (dialect === 'postgres') {
    await sql`alter table audit_logs alter column created_at type text
      using to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`.execute(db);
  }
  await createIndexes(db, dialect, TEXT_KEYS, false);
}
