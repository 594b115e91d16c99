import type { Kysely } from 'kysely';

/** The database this runs on, written out here: a migration imports nothing of the application. */
type Dialect = 'sqlite' | 'postgres';

/** Durable background jobs (jobs/queue.ts). Frozen in time: Kysely<any>, no app imports. */
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('jobs')
    .$call((t) =>
      dialect === 'sqlite'
        ? t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        : t.addColumn('id', 'bigserial', (c) => c.primaryKey()),
    )
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload_sealed', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('run_at', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_due').on('jobs').columns(['status', 'run_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('not reversible');
}
