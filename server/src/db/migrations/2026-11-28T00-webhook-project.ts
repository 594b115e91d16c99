import type { Kysely } from 'kysely';

/**
 * A webhook may hear one project only (`project_id`); null, the value every existing webhook gets, keeps
 * it hearing every project of its workspace. A webhook limited to a project goes with that project.
 * Frozen in time: Kysely<any>, no app imports.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('webhooks')
    .addColumn('project_id', 'text', (c) => c.references('projects.id').onDelete('cascade'))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhooks').dropColumn('project_id').execute();
}
