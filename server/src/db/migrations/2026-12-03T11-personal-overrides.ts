import type { Kysely } from 'kysely';

/**
 * D75: personal overrides. One row per (environment, person, key): the person's own value of a key, sealed
 * with the project key like a variable's current value (bound to project, environment and key). The shared
 * variable, its history and the revisions are untouched; an override whose key no longer exists stays
 * (orphaned) and is never applied. `environments.override_rev` counts the override writes of an environment
 * (0: none ever): the pull, which reads the environment row anyway, looks overrides up only when it is not 0,
 * and a held pull (D43) wakes when it moves (ADR 0031).
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
  await db.schema
    .alterTable('environments')
    .addColumn('override_rev', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('environments').dropColumn('override_rev').execute();
  await db.schema.dropTable('personal_overrides').execute();
}
