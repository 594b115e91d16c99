import type { Kysely } from 'kysely';

/**
 * D44: every committed change to an environment's variables is a numbered revision. `env_revisions` holds
 * one row per revision (who, when, which action, which keys); each history entry records the revision it
 * belongs to, so the state at revision N is, per key, its latest entry at or before N (an index lookup per
 * key, not a scan of the environment's history). History written before this migration gets revision 0:
 * it all precedes every recorded revision. Frozen in time: Kysely<any>, no app imports (guide convention 13).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('env_revisions')
    .addColumn('environment_id', 'text', (c) => c.notNull().references('environments.id').onDelete('cascade'))
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_name', 'text', (c) => c.notNull())
    .addColumn('created', 'text', (c) => c.notNull())
    .addColumn('updated', 'text', (c) => c.notNull())
    .addColumn('deleted', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('env_revisions_pk', ['environment_id', 'revision'])
    .execute();
  await db.schema
    .alterTable('variable_history')
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('variable_history_key_revision')
    .on('variable_history')
    .columns(['environment_id', 'key', 'revision'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('variable_history_key_revision').execute();
  await db.schema.alterTable('variable_history').dropColumn('revision').execute();
  await db.schema.dropTable('env_revisions').execute();
}
