import type { Kysely } from 'kysely';

/** The database this runs on, written out here: a migration imports nothing of the application. */
type Dialect = 'sqlite' | 'postgres';

/**
 * Events: webhooks, their delivery attempts, and the per-workspace record of the last expiry
 * reminder. Frozen in time: Kysely<any>, no app imports (guide convention 13).
 */
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('last_status', 'integer')
    .addColumn('last_fired_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_workspace').on('webhooks').column('workspace_id').execute();

  await db.schema
    .createTable('webhook_deliveries')
    .$call((t) =>
      dialect === 'sqlite'
        ? t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        : t.addColumn('id', 'bigserial', (c) => c.primaryKey()),
    )
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_webhook')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'id'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_created').on('webhook_deliveries').column('created_at').execute();

  await db.schema
    .createTable('expiry_reminders')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    .addColumn('sent_at', 'text', (c) => c.notNull())
    .execute();

  // The reminder scan looks for variables by expiry across all workspaces.
  await db.schema.createIndex('variables_expires_at').on('variables').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('not reversible');
}
