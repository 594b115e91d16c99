import { type Kysely, sql } from 'kysely';

/** The database this runs on, written out here: a migration imports nothing of the application. */
type Dialect = 'sqlite' | 'postgres';

/**
 * D53, D64 (ADR 0022, "Keys any SQLite reads"): SQLite's nine audit indexes without functions newer than SQLite
 * 3.40, the `sqlite3` of Debian 12 (Ubuntu 24.04 has 3.45). Migration 2026-11-29T00-audit-compact-keys keyed
 * them by `unhex(id, '-')` (SQLite 3.41) and `unixepoch(t, 'subsec')` (the modifier is 3.42's: 3.40 answers
 * NULL), so an older SQLite could not even check a backup: `PRAGMA integrity_check` failed with `unknown
 * function: unhex()`. Now:
 *
 * - an id is keyed by its last 8 characters, `substr(id, 29)` (random in every id the server makes; 9 bytes
 *   in an index entry against 17), and queries compare the whole text as well (db/audit-keys.ts `auditIdIs`),
 *   so the key finds the candidates and the text decides;
 * - a time by `cast(round((julianday(t) - 2440587.5) * 86400000) as integer)`: the same milliseconds as before
 *   (SQLite holds a time as whole milliseconds of the Julian day), the same 6-byte integer.
 *
 * The rows are not touched; the indexes are built again (about a minute per million entries on the shared
 * build machine). `audit_logs_project_at` keeps `project_id` plain, for the project's cascade. PostgreSQL's
 * keys (`uuid`, `timestamptz`) are left as they are. Frozen in time: Kysely<any>, no app imports (guide
 * convention 13).
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
  // D65: a stream reads its workspace's entries in id order (the rowid every entry ends with).
  ['audit_logs_ws_id', ['#workspace_id']],
];

type Spelling = { id: (column: string) => string; time: (column: string) => string };
const PORTABLE: Spelling = {
  id: (c) => `substr(${c}, 29)`,
  time: (c) => `cast(round((julianday(${c}) - 2440587.5) * 86400000) as integer)`,
};
/** Migration 2026-11-29T00-audit-compact-keys's, for `down`. */
const SQLITE_341: Spelling = {
  id: (c) => `unhex(${c}, '-')`,
  time: (c) => `cast(round(unixepoch(${c}, 'subsec') * 1000) as integer)`,
};

async function rebuild(db: Kysely<any>, spelling: Spelling): Promise<void> {
  for (const [name, columns] of KEYS) {
    const parts = columns.map((c) =>
      c.startsWith('#') ? spelling.id(c.slice(1)) : c.startsWith('@') ? spelling.time(c.slice(1)) : c,
    );
    await sql.raw(`drop index ${name}`).execute(db);
    await sql.raw(`create index ${name} on audit_logs (${parts.join(', ')})`).execute(db);
  }
}

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect === 'sqlite') await rebuild(db, PORTABLE);
}

/** The keys of migration 2026-11-29T00-audit-compact-keys again (they need SQLite 3.42 to read). */
export async function down(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect === 'sqlite') await rebuild(db, SQLITE_341);
}
