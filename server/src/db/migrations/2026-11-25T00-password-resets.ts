import type { Kysely } from 'kysely';

/**
 * D54 password reset links. One row per user (the primary key), so sending a newer link replaces the
 * older one in the same write: "voided by a newer one" needs no sweep and holds under concurrency. The
 * token is stored as its SHA-256 only; `email` is the address the link went to (a link outlives no email
 * change); `attempts` counts wrong second-factor codes tried with the link (D13's five, as for an
 * mfaToken). Frozen in time: Kysely<any>, no app imports (guide convention 13).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('password_resets')
    .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('not reversible');
}
