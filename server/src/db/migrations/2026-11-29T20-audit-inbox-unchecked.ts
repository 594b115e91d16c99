import { type Kysely, sql } from 'kysely';

/** The database this runs on, written out here: a migration imports nothing of the application. */
type Dialect = 'sqlite' | 'postgres';

/**
 * PostgreSQL's audit inbox without foreign keys (ADR 0007, eleventh round). A foreign key's check locks the
 * parent row (`for key share`) for every inserted row; the group commits of concurrent pulls all lock the
 * same project and workspace rows, and PostgreSQL records each such shared lock of several transactions as a
 * new multixact. That was about a fifth of PostgreSQL's CPU per pull. The inbox keeps no parent locked now:
 * the move into `audit_logs` (whose foreign keys stay) takes only the entries whose workspace and project
 * still exist, so the entries of a project or workspace deleted while they wait go with it, as the cascade
 * took them before (db/index.ts). SQLite's inbox keeps its foreign keys: one writer, no row locks, a check
 * is an index probe.
 *
 * Frozen in time: Kysely<any>, no app imports (guide convention 13).
 */
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const name of await foreignKeys(db)) {
    await sql`alter table audit_inbox drop constraint ${sql.id(name)}`.execute(db);
  }
}

/** The foreign keys again, once the entries whose parent is gone (which the next move would drop) are dropped. */
export async function down(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`delete from audit_inbox i where not exists (select 1 from workspaces w where w.id = i.workspace_id)
    or (i.project_id is not null and not exists (select 1 from projects p where p.id = i.project_id))`.execute(db);
  await sql`alter table audit_inbox
    add foreign key (workspace_id) references workspaces (id) on delete cascade,
    add foreign key (project_id) references projects (id) on delete cascade`.execute(db);
}

async function foreignKeys(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select conname as name from pg_constraint
    where conrelid = 'audit_inbox'::regclass and contype = 'f' order by conname`.execute(db);
  return rows.map((r) => r.name);
}
