import type { Kysely } from 'kysely';

/**
 * D73 and D74. `expires_at` (ISO 8601, null: permanent) on workspace memberships, project roles and
 * per-environment permissions: the authorization reads it with the row it already reads and refuses a grant
 * whose time has passed; the access-expiry job then removes it. `env_permissions.request_id`: the D74
 * request a temporary permission was granted by (D76 shows it). `access_requests`: D74's requests.
 * Frozen in time: Kysely<any>, no app imports (guide convention 13).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workspace_members').addColumn('expires_at', 'text').execute();
  await db.schema.alterTable('project_members').addColumn('expires_at', 'text').execute();
  await db.schema.alterTable('env_permissions').addColumn('expires_at', 'text').execute();
  await db.schema.alterTable('env_permissions').addColumn('request_id', 'text').execute();
  await db.schema
    .createTable('access_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('requester_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('permission', 'text', (c) => c.notNull())
    .addColumn('duration_seconds', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('decided_by', 'text')
    .addColumn('decision_reason', 'text')
    .addColumn('granted_seconds', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('decided_at', 'text')
    .execute();
  await db.schema
    .createIndex('access_requests_project')
    .on('access_requests')
    .columns(['project_id', 'status', 'created_at'])
    .execute();
  await db.schema
    .createIndex('access_requests_pending')
    .on('access_requests')
    .columns(['status', 'created_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('access_requests').execute();
  await db.schema.alterTable('env_permissions').dropColumn('request_id').execute();
  await db.schema.alterTable('env_permissions').dropColumn('expires_at').execute();
  await db.schema.alterTable('project_members').dropColumn('expires_at').execute();
  await db.schema.alterTable('workspace_members').dropColumn('expires_at').execute();
}
