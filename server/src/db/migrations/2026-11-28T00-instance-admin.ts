import type { Kysely } from 'kysely';

/**
 * D68 and D69. `users.last_workspace_id`: the workspace a login lands in (set by switch-workspace and
 * accept-invite; no foreign key, since a membership that ended leaves it pointing at a workspace the login
 * then passes over). `users.instance_admin`: the instance's administrators; on an existing instance the
 * earliest account becomes the first one, as it would have been had the rule been there from the start.
 * `instance_settings`: one row of instance-wide settings, the signup mode (`open`, `invite`, `closed`).
 * Frozen in time: Kysely<any>, no app imports (guide convention 13).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('last_workspace_id', 'text').execute();
  await db.schema
    .alterTable('users')
    .addColumn('instance_admin', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  const first = await db.selectFrom('users').select('id').orderBy('created_at').orderBy('id').executeTakeFirst();
  if (first) await db.updateTable('users').set({ instance_admin: 1 }).where('id', '=', first.id).execute();
  await db.schema
    .createTable('instance_settings')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('signup', 'text', (c) => c.notNull().defaultTo('open'))
    .execute();
  await db.insertInto('instance_settings').values({ id: 1, signup: 'open' }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('instance_settings').execute();
  await db.schema.alterTable('users').dropColumn('instance_admin').execute();
  await db.schema.alterTable('users').dropColumn('last_workspace_id').execute();
}
