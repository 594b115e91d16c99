import type { Kysely } from 'kysely';

/**
 * D75: personal overrides. One row per (environment, person, key): the person's own value of a key, sealed
 * with the project key like a variable's current value (bound to project, environment and key). The shared
 * variable, its history and the revisions are untouched; an override whose key no longer exists stays
 * (orphaned) and is never applied.
 *
 * Frozen in time: Kysely<any>, no app imports (guide convention 13).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('personal_overrides')
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('value_sealed', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('personal_overrides_pk', ['environment_id', 'user_id', 'key'])
    .execute();
  await db.schema
    .createIndex('personal_overrides_user')
    .on('personal_overrides')
    .columns(['user_id', 'environment_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('personal_overrides').execute();
}
