import type { Kysely } from 'kysely';

/**
 * D66: which (credential, environment, revision) had an unchanged pull (304) audited, and when. The primary
 * key is what lets several instances agree: each claims the hour with one INSERT ... ON CONFLICT DO UPDATE
 * ... WHERE audited_at is an hour old, and only the instance whose statement wrote the row writes the audit
 * entry (in the same transaction). A row older than an hour means nothing and may be deleted at any time. No
 * foreign keys: a row outlives its token or environment by at most the next sweep. Frozen in time:
 * Kysely<any>, no app imports (guide convention 13).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('unchanged_pull_audits')
    .addColumn('credential_id', 'text', (c) => c.notNull())
    .addColumn('environment_id', 'text', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('audited_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('unchanged_pull_audits_pk', ['credential_id', 'environment_id', 'revision'])
    .execute();
  await db.schema.createIndex('unchanged_pull_audits_at').on('unchanged_pull_audits').column('audited_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('unchanged_pull_audits').execute();
}
