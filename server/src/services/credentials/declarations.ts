import type { Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { DynamicSecretsTable } from '../../db/schema.js';
import { notFound } from '../../lib/errors.js';
import type { Deps } from '../core/deps.js';
import type { ConnectionRow } from './connections.js';

/**
 * D71: a dynamic secret's declaration as the leases read it (what its values are called, which statements
 * revoke), shared by the declarations' routes (dynamic-secrets.ts) and the leases (leases.ts).
 */
export type DynamicSecretRow = Selectable<DynamicSecretsTable>;

/** Value name → variable name: `<NAME>_USERNAME`, `<NAME>_PASSWORD` unless the declaration names them. */
export function leaseKeyNames(row: Pick<DynamicSecretRow, 'name' | 'keys'>): Record<string, string> {
  const base = row.name.toUpperCase().replace(/-/g, '_');
  return { username: `${base}_USERNAME`, password: `${base}_PASSWORD`, ...(JSON.parse(row.keys) as object) };
}

/** Statements as stored (JSON) and answered. */
type StoredStatement = string | string[];
export const statementsOf = (json: string): StoredStatement[] => JSON.parse(json) as StoredStatement[];

/** The revoke statements a lease made now would copy: the declared ones, or the kind's default. */
export function revokeStatements(deps: Pick<Deps, 'engines'>, row: DynamicSecretRow, kind: ConnectionRow['kind']) {
  return row.revoke_statements === null
    ? deps.engines.engine(kind).defaultRevoke.map((st) => (typeof st === 'string' ? st : [...st]))
    : statementsOf(row.revoke_statements);
}

/** A dynamic secret of an environment by name, with its connection (404 names it). */
export async function findDynamicSecret(
  db: Db,
  envId: string,
  name: string,
): Promise<{ row: DynamicSecretRow; conn: ConnectionRow }> {
  const row = await db
    .selectFrom('dynamic_secrets')
    .selectAll()
    .where('environment_id', '=', envId)
    .where('name', '=', name)
    .executeTakeFirst();
  if (!row) throw notFound(`dynamic secret "${name}"`);
  const conn = await db
    .selectFrom('connections')
    .selectAll()
    .where('id', '=', row.connection_id)
    .executeTakeFirstOrThrow();
  return { row, conn };
}
