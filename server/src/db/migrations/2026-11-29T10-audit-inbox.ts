import { type Kysely, sql } from 'kysely';

/** The database this runs on, written out here: a migration imports nothing of the application. */
type Dialect = 'sqlite' | 'postgres';

/**
 * SQLite only: the audit inbox (ADR 0007, eighth round). The audit writer thread (db/audit-writer.worker.mjs)
 * commits the entries of reads (pulls, reveals, exports) here, durably and before they are answered, and moves
 * them into `audit_logs` in one statement per few hundred rows, and whenever anything is about to read
 * `audit_logs` (DbHandle.flushAuditInbox). A group commit then writes one table page instead of a page of the
 * table and of each of D64's nine indexes.
 *
 * The same columns as `audit_logs`, with the same foreign keys and cascades: an entry whose project or
 * workspace is deleted while it waits here goes with it, as it would from `audit_logs`, so the move never
 * meets a missing parent. No index: the table holds a few hundred rows at most, and every statement on it
 * reads or deletes all of them. PostgreSQL's audit inserts go straight to `audit_logs` (several commits run
 * in parallel there), so it has no such table. Frozen in time: Kysely<any>, no app imports (guide
 * convention 13).
 */
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  await db.schema
    .createTable('audit_inbox')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_key', 'text')
    .addColumn('target_env', 'text')
    .addColumn('actor_id', 'text')
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('detail', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

/** Entries still waiting are moved into `audit_logs` first: going back loses no entry. */
export async function down(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect !== 'sqlite') return;
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
