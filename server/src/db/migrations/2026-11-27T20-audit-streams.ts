import { type Kysely, sql } from 'kysely';

/** The database this runs on, written out here: a migration imports nothing of the application. */
type Dialect = 'sqlite' | 'postgres';

/**
 * D65: audit streams. One row per stream: its target, its sealed `whsec_` secret, its cursor (the last
 * audit id the receiver acknowledged, or the id it starts after), the retry state and the lease that keeps a
 * batch to one instance at a time (jobs/audit-streams.ts, ADR 0024).
 *
 * On PostgreSQL, audit ids come from a sequence and a lower id may commit after a higher one. The streams
 * only pass an id once every transaction that could still hold a lower one has ended; for that, a writer must
 * have its transaction id before it takes an audit id, so the default now takes the one, then the other
 * (ADR 0024). Frozen in time: Kysely<any>, no app imports.
 */
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('audit_streams')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('cursor', dialect === 'postgres' ? 'bigint' : 'integer', (c) => c.notNull())
    .addColumn('last_status', 'integer')
    .addColumn('last_attempt_at', 'text')
    .addColumn('last_delivered_at', 'text')
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_streams_workspace').on('audit_streams').column('workspace_id').execute();
  // A stream reads its workspace's entries above its cursor in id order, and counts them (`pending`): without
  // this, both walk every workspace's entries since the cursor (the audit pages' indexes are by time).
  await db.schema.createIndex('audit_logs_ws_id').on('audit_logs').columns(['workspace_id', 'id']).execute();

  if (dialect === 'postgres') {
    const { rows } = await sql<{ seq: string }>`select pg_get_serial_sequence('audit_logs', 'id') as seq`.execute(db);
    const seq = rows[0]!.seq.replace(/'/g, "''");
    await sql
      .raw(
        `create or replace function audit_logs_next_id() returns bigint language plpgsql volatile as $$
begin
  perform pg_current_xact_id();
  return nextval('${seq}');
end $$`,
      )
      .execute(db);
    await sql`alter table audit_logs alter column id set default audit_logs_next_id()`.execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('not reversible');
}
