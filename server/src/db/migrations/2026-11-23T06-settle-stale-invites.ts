import { type Kysely, sql } from 'kysely';

/**
 * Closes pending invites whose address already belongs to a member of the workspace. Before this, adding an
 * existing account directly left that person's pending invite open: it held a seat in `usage.members`, and
 * after a removal its old link let them back in. The add now closes it (services/workspace/team.ts); this settles the
 * rows written before. Frozen in time: Kysely<any>, no app imports.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`update invites set revoked_at = ${new Date().toISOString()}
    where accepted_at is null and revoked_at is null and email in (
      select u.email from users u join workspace_members m on m.user_id = u.id
      where m.workspace_id = invites.workspace_id
    )`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('not reversible');
}
