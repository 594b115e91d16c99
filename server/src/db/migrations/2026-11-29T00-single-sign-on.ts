import type { Kysely } from 'kysely';

/**
 * D63: single sign-on (ADR 0025).
 *
 * - `workspace_sso`: one row per workspace that signs in through an OpenID Connect provider. The client
 *   secret is sealed with a key derived from the master key, bound to the workspace.
 * - `sso_domains`: the email domains each such workspace claims; the primary key is the domain, so a domain
 *   belongs to one workspace only (a second claim is a unique violation: 409).
 * - `sso_flows`: a sign-in between its start and its callback. Kept in the database, not in a process, so a
 *   flow started on one instance finishes on another. The `state` is stored only as its SHA-256 (whoever
 *   reads the table cannot finish a flow), the PKCE verifier sealed, the browser's binding cookie hashed. A row
 *   is deleted when its callback arrives, and rows past `expires_at` go with every new start.
 *
 * Frozen in time: Kysely<any>, no app imports (guide convention 13).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('workspace_sso')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id').onDelete('cascade'))
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('client_secret_sealed', 'text', (c) => c.notNull())
    .addColumn('enforce', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('sso_domains')
    .addColumn('domain', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspace_sso.workspace_id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('sso_domains_workspace').on('sso_domains').column('workspace_id').execute();
  await db.schema
    .createTable('sso_flows')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('code_verifier_sealed', 'text', (c) => c.notNull())
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sso_flows_expires').on('sso_flows').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sso_flows').execute();
  await db.schema.dropTable('sso_domains').execute();
  await db.schema.dropTable('workspace_sso').execute();
}
