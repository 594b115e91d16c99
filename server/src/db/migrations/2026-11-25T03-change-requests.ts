import type { Kysely } from 'kysely';

/**
 * D47 change requests. `environments.require_approval` (0/1, like `protected`) turns approval on.
 * `change_requests` holds one proposal to one environment: its author (the user, and the display name of the
 * credential that opened it), the revision it was based on, and how it was closed. `change_request_items`
 * holds its changes in order: a `set` carries the value sealed by the project key in its own role (never
 * plaintext), a `delete` none. Frozen in time: Kysely<any>, no app imports (guide convention 13).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('environments')
    .addColumn('require_approval', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('change_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('base_revision', 'integer', (c) => c.notNull())
    .addColumn('author_id', 'text', (c) => c.notNull())
    .addColumn('author_name', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('closed_by', 'text')
    .addColumn('closed_at', 'text')
    .addColumn('applied_revision', 'integer')
    .addColumn('reason', 'text')
    .execute();
  await db.schema
    .createIndex('change_requests_env_status')
    .on('change_requests')
    .columns(['environment_id', 'status', 'created_at'])
    .execute();
  await db.schema
    .createTable('change_request_items')
    .addColumn('change_request_id', 'text', (c) => c.notNull().references('change_requests.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('op', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('value_sealed', 'text')
    .addColumn('expires_at', 'text')
    .addPrimaryKeyConstraint('change_request_items_pk', ['change_request_id', 'position'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('change_request_items').execute();
  await db.schema.dropTable('change_requests').execute();
  await db.schema.alterTable('environments').dropColumn('require_approval').execute();
}
