import { type Kysely, sql } from 'kysely';

/** The database this runs on, written out here: a migration imports nothing of the application. */
type Dialect = 'sqlite' | 'postgres';

/**
 * The audit inbox (ADR 0007, eighth round). The group commit of the entries of reads (pulls, reveals, exports)
 * writes them here, durably and before they are answered; they are moved into `audit_logs` in one statement
 * per few hundred rows, and whenever anything is about to read `audit_logs` (DbHandle.flushAuditInbox). A group
 * commit then writes one table row per entry instead of a row and an entry in each of D64's nine indexes.
 *
 * The same columns as `audit_logs` (on PostgreSQL `created_at` is a `timestamptz` there, migration
 * 2026-11-29T00-audit-compact-keys), with the same foreign keys and cascades: an entry whose project or
 * workspace is deleted while it waits here goes with it, as it would from `audit_logs`, so the move never
 * meets a missing parent. No other index: the table holds a few hundred rows at most, and every statement on
 * it reads or deletes all of them. The id only orders the moves. Frozen in time: Kysely<any>, no app imports
 * (guide convention 13).
 */
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('audit_inbox')
    .addColumn('id', dialect === 'sqlite' ? 'integer' : 'bigserial', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_key', 'text')
    .addColumn('target_env', 'text')
    .addColumn('actor_id', 'text')
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('detail', 'text')
    .addColumn('created_at', dialect === 'sqlite' ? 'text' : 'timestamptz', (c) => c.notNull())
    .execute();
}

/** Entries still waiting are moved into `audit_logs` first: going back loses no entry. */
export async function down(db: Kysely<any>): Promise<void> {
  const columns = sql.raw(COLUMNS.join(', '));
  await sql`insert into audit_logs (${columns}) select ${columns} from audit_inbox order by id`.execute(db);
  await db.schema.dropTable('audit_inbox').execute();
}

const COLUMNS = [
  'workspace_id',
  'project_id',
  'action',
  'target_key',
  'target_env',
  'actor_id',
  'actor_type',
  'detail',
  'created_at',
];
