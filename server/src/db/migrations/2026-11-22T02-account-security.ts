import type { Kysely } from 'kysely';

/** The database this runs on, written out here: a migration imports nothing of the application. */
type Dialect = 'sqlite' | 'postgres';

/**
 * Account security: TOTP replay guard, backup codes, MFA login challenges, email verification.
 * Frozen in time: Kysely<any>, no app imports (guide convention 13).
 */
export async function up(db: Kysely<any>, _dialect: Dialect): Promise<void> {
  // D13: the last TOTP time step accepted for the user; a code of that step or an earlier one is refused.
  await db.schema.alterTable('users').addColumn('mfa_last_step', 'integer').execute();

  // D13: backup codes, stored only as a keyed digest; redeeming one is a conditional DELETE (single use).
  await db.schema
    .createTable('mfa_backup_codes')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mfa_backup_codes_pk', ['user_id', 'code_hash'])
    .execute();

  // Spec "Login" MFA-pending state: one row per mfaToken (stored as its SHA-256), with its wrong-code count.
  await db.schema
    .createTable('mfa_challenges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mfa_challenges_expires').on('mfa_challenges').column('expires_at').execute();

  // D11: email verification links; the token is stored as its SHA-256 only.
  await db.schema
    .createTable('email_verifications')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('email_verifications_user').on('email_verifications').column('user_id').execute();
}

export async function down(): Promise<void> {
  throw new Error('not reversible');
}
