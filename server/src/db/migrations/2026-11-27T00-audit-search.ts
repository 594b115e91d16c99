import type { Kysely } from 'kysely';

/** The database this runs on, written out here: a migration imports nothing of the application. */
type Dialect = 'sqlite' | 'postgres';

/**
 * D64: every filter of both audit endpoints is served by an index. Pages are ordered newest first by
 * `(created_at, id)`, so each index is "the scope, the equality filters, then created_at (then id)": the
 * equality filters pick one slice of the index, `from`/`to` are a range inside it and the page is read off
 * its end, however large the log. Scopes are the workspace (workspace endpoint) and the project (project
 * endpoint); the equality filters are none, `action`, `actor`, and both. The two older indexes ((scope, id))
 * are replaced: the (scope, created_at) ones serve the foreign keys' cascades as well.
 *
 * SQLite appends the rowid (`id`) to every index entry, so there it is not listed; PostgreSQL gets it as the
 * last column, so that the tie-break of the order needs no sort.
 *
 * `task_leases`: a periodic task that must run on one instance at a time (the audit prune) claims its lease
 * here with one conditional upsert. Frozen in time: Kysely<any>, no app imports (guide convention 13).
 */
const SHAPES: [string, string[]][] = [
  ['audit_logs_ws_at', ['workspace_id', 'created_at']],
  ['audit_logs_ws_action_at', ['workspace_id', 'action', 'created_at']],
  ['audit_logs_ws_actor_at', ['workspace_id', 'actor_id', 'created_at']],
  ['audit_logs_ws_actor_action_at', ['workspace_id', 'actor_id', 'action', 'created_at']],
  ['audit_logs_project_at', ['project_id', 'created_at']],
  ['audit_logs_project_action_at', ['project_id', 'action', 'created_at']],
  ['audit_logs_project_actor_at', ['project_id', 'actor_id', 'created_at']],
  ['audit_logs_project_actor_action_at', ['project_id', 'actor_id', 'action', 'created_at']],
];

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  for (const [name, columns] of SHAPES) {
    await db.schema
      .createIndex(name)
      .on('audit_logs')
      .columns(dialect === 'postgres' ? [...columns, 'id'] : columns)
      .execute();
  }
  await db.schema.dropIndex('audit_logs_project').execute();
  await db.schema.dropIndex('audit_logs_workspace').execute();
  await db.schema
    .createTable('task_leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('until', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('task_leases').execute();
  await db.schema.createIndex('audit_logs_project').on('audit_logs').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('audit_logs_workspace').on('audit_logs').columns(['workspace_id', 'id']).execute();
  for (const [name] of SHAPES) await db.schema.dropIndex(name).execute();
}
