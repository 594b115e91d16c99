import type { Kysely } from 'kysely';

/**
 * `jobs.lane`: jobs of one lane (a webhook's deliveries) run at most a few at a time on an instance, so a
 * hanging target cannot take the runner's slots from the others (jobs/queue.ts, ADR 0010). The claim
 * filters on it, which is why it is a column and not part of the sealed payload. Older rows have no lane.
 * Frozen in time: Kysely<any>, no app imports.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('lane', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('not reversible');
}
