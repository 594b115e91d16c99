import type { Kysely } from 'kysely';

/**
 * D70-D72: credentials that expire by themselves (ADR 0029).
 *
 * - `connections`: a project's managed databases. The admin password is sealed with the project key and bound
 *   to the row; `pending_password_sealed` holds a root password being rotated (D70 rotate-root) from before the
 *   database changes until the row keeps it, so a crash in between loses neither. `version` moves on every
 *   change: the engines' pools are keyed by (id, version), so a pool never outlives the settings it was made of.
 * - `dynamic_secrets`: an environment's declarations (D71): statements and key names as JSON.
 * - `leases`: one row per database user svcenv made, written (state `creating`) before the create statements
 *   run, so a user made by a process that died before it recorded the lease is still found and removed. The
 *   revoke statements are copied into the row: a lease is revoked the way it was promised when it was made.
 *   `next_attempt_at` orders the revocation job's work; `locked_until` keeps two revocations of one lease apart.
 * - `rotations`: a secret variable bound to a database user (D72). The new password is sealed and recorded as
 *   pending (`pending_password_sealed`, `pending_index`) before the database changes; the revision that writes
 *   it clears them.
 *
 * Frozen in time: Kysely<any>, no app imports (guide convention 13).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('port', 'integer', (c) => c.notNull())
    .addColumn('database', 'text')
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('password_sealed', 'text', (c) => c.notNull())
    .addColumn('pending_password_sealed', 'text')
    .addColumn('tls_mode', 'text', (c) => c.notNull())
    .addColumn('tls_ca', 'text')
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('root_rotated_at', 'text')
    .execute();
  await db.schema.createIndex('connections_name').unique().on('connections').columns(['project_id', 'name']).execute();

  await db.schema
    .createTable('dynamic_secrets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id'))
    .addColumn('create_statements', 'text', (c) => c.notNull())
    .addColumn('revoke_statements', 'text')
    .addColumn('keys', 'text', (c) => c.notNull())
    .addColumn('default_ttl_seconds', 'integer', (c) => c.notNull())
    .addColumn('max_ttl_seconds', 'integer', (c) => c.notNull())
    .addColumn('max_leases', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('dynamic_secrets_name')
    .unique()
    .on('dynamic_secrets')
    .columns(['environment_id', 'name'])
    .execute();
  await db.schema.createIndex('dynamic_secrets_connection').on('dynamic_secrets').column('connection_id').execute();

  await db.schema
    .createTable('leases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('dynamic_secret_id', 'text', (c) => c.notNull().references('dynamic_secrets.id').onDelete('cascade'))
    .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id'))
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('revoke_statements', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_by_name', 'text', (c) => c.notNull())
    .addColumn('token_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('max_expires_at', 'text', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('end_reason', 'text')
    .addColumn('ended_at', 'text')
    .execute();
  // The revocation job's scan: open leases by when they are due.
  await db.schema.createIndex('leases_due').on('leases').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('leases_secret').on('leases').columns(['dynamic_secret_id', 'state']).execute();
  await db.schema.createIndex('leases_token').on('leases').columns(['token_id', 'state']).execute();

  await db.schema
    .createTable('rotations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id'))
    .addColumn('strategy', 'text', (c) => c.notNull())
    .addColumn('usernames', 'text', (c) => c.notNull())
    .addColumn('active_index', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('interval_seconds', 'integer')
    .addColumn('next_rotation_at', 'text')
    .addColumn('last_rotated_at', 'text')
    .addColumn('last_error', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('pending_password_sealed', 'text')
    .addColumn('pending_index', 'integer')
    .addColumn('locked_until', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rotations_key').unique().on('rotations').columns(['environment_id', 'key']).execute();
  await db.schema.createIndex('rotations_due').on('rotations').column('next_rotation_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rotations').execute();
  await db.schema.dropTable('leases').execute();
  await db.schema.dropTable('dynamic_secrets').execute();
  await db.schema.dropTable('connections').execute();
}
