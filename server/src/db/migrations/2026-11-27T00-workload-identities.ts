import { type Kysely, sql } from 'kysely';

/** The database this runs on, written out here: a migration imports nothing of the application. */
type Dialect = 'sqlite' | 'postgres';

/**
 * D60 workload identities and D62 network binding.
 *
 * `workload_identities`: who may exchange a platform JWT for a short-lived access token, and what that token
 * may do. Deleted identities keep their row (`deleted_at`) so that the audit log still names the actor of the
 * entries they made; names are unique among the live ones. `identity_tokens`: the tokens issued to them, by
 * SHA-256 of the token (a 190-bit random secret needs no slow hash); an update or deletion of the identity
 * deletes its tokens. `access_tokens.trusted_cidrs`: a JSON array, null for anywhere.
 *
 * On SQLite both new tables bump the epoch counter of the authentication cache (migration T05), so a token
 * whose identity changed is refused on the next request of every process. Frozen in time: Kysely<any>, no
 * app imports (guide convention 13).
 */
export async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('workload_identities')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('audience', 'text', (c) => c.notNull())
    .addColumn('subject', 'text')
    .addColumn('claims', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('envs', 'text', (c) => c.notNull())
    .addColumn('ttl_seconds', 'integer', (c) => c.notNull())
    .addColumn('trusted_cidrs', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('last_login_at', 'text')
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema
    .createIndex('workload_identities_live_name')
    .unique()
    .on('workload_identities')
    .columns(['workspace_id', 'name'])
    .where(sql.ref('deleted_at'), 'is', null)
    .execute();
  await db.schema
    .createTable('identity_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('identity_id', 'text', (c) => c.notNull().references('workload_identities.id').onDelete('cascade'))
    .addColumn('token_prefix', 'text', (c) => c.notNull())
    .addColumn('token_digest', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('identity_tokens_prefix').on('identity_tokens').column('token_prefix').execute();
  await db.schema
    .createIndex('identity_tokens_identity')
    .on('identity_tokens')
    .columns(['identity_id', 'expires_at'])
    .execute();
  await db.schema.alterTable('access_tokens').addColumn('trusted_cidrs', 'text').execute();
  if (dialect !== 'sqlite') return;
  for (const table of ['workload_identities', 'identity_tokens']) {
    for (const op of ['insert', 'update', 'delete']) {
      await sql
        .raw(
          `create trigger ${table}_${op}_epoch after ${op} on ${table} begin update cache_epoch set n = n + 1 where id = 1; end`,
        )
        .execute(db);
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('access_tokens').dropColumn('trusted_cidrs').execute();
  await db.schema.dropTable('identity_tokens').execute();
  await db.schema.dropTable('workload_identities').execute();
}
