import type { Kysely } from 'kysely';

/** Workspace invites (D17). Frozen in time: Kysely<any>, no app imports. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('invites')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('ws_role', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('invited_by', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('accepted_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('invites_workspace').on('invites').columns(['workspace_id', 'email']).execute();
}

export async function down(): Promise<void> {
  throw new Error('not reversible');
}
