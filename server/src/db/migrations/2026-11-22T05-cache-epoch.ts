import { type Kysely, sql } from 'kysely';

/** The database this runs on, written out here: a migration imports nothing of the application. */
type Dialect = 'sqlite' | 'postgres';

/**
 * The change counter behind the per-process read cache of authentication and authorization rows
 * (db/epoch-cache.ts). On SQLite, triggers bump it in the same transaction as any change to the tables
 * those rows come from, so a reader that finds the counter unchanged knows its cached rows are still
 * what the database holds. PostgreSQL gets the table but no triggers: the cache is off there (ADR 0007).
 * Frozen in time: Kysely<any>, no app imports (guide convention 13).
 */
export const EPOCH_TABLES = [
  'users',
  'workspace_members',
  'access_tokens',
  'projects',
  'project_members',
  'env_permissions',
  'environments',
] as const;

export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('cache_epoch')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('n', 'integer', (c) => c.notNull())
    .execute();
  await db.insertInto('cache_epoch').values({ id: 1, n: 0 }).execute();
  if (dialect !== 'sqlite') return;
  for (const table of EPOCH_TABLES) {
    for (const op of ['insert', 'update', 'delete']) {
      await sql
        .raw(
          `create trigger ${table}_${op}_epoch after ${op} on ${table} begin update cache_epoch set n = n + 1 where id = 1; end`,
        )
        .execute(db);
    }
  }
}

export async function down(): Promise<void> {
  throw new Error('not reversible');
}
