import { type DynamicSecret, LEASE_TTL, MAX_LEASES } from '@svcenv/contract';
import type { Db } from '../../db/index.js';
import { AppError, validation } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { Statement } from '../../managed/engine.js';
import { authorizeEnv, type EnvTarget } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import type { Deps } from '../core/deps.js';
import { type ConnectionRow, findConnection } from './connections.js';
import {
  type DynamicSecretRow,
  findDynamicSecret,
  leaseKeyNames,
  revokeStatements,
  statementsOf,
} from './declarations.js';
import { OPEN_STATES, revokeLeasesNow } from './leases.js';

/**
 * D71: the dynamic secrets an environment declares: which connection, the statements that make and remove a
 * user, what the lease's values are called, and its limits. Declaring needs write permission on the
 * environment (the statements run with the connection's privileges on every lease), reading the list needs
 * read: whoever may pull may see what a lease would give them.
 */
async function leaseCounts(db: Db, ids: string[]): Promise<Map<string, { open: number; failed: number }>> {
  const out = new Map(ids.map((id) => [id, { open: 0, failed: 0 }]));
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom('leases')
    .select(['dynamic_secret_id', 'state'])
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('dynamic_secret_id', 'in', ids)
    .where('state', 'in', OPEN_STATES)
    .groupBy(['dynamic_secret_id', 'state'])
    .execute();
  for (const r of rows) {
    const c = out.get(r.dynamic_secret_id)!;
    c.open += Number(r.n);
    if (r.state === 'revoke_failed') c.failed += Number(r.n);
  }
  return out;
}

function present(
  deps: Pick<Deps, 'engines'>,
  row: DynamicSecretRow,
  env: string,
  conn: ConnectionRow,
  counts: { open: number; failed: number },
): DynamicSecret {
  return {
    name: row.name,
    env,
    connection: conn.name,
    kind: conn.kind,
    create: statementsOf(row.create_statements),
    revoke: revokeStatements(deps, row, conn.kind),
    revokeIsDefault: row.revoke_statements === null,
    keys: leaseKeyNames(row),
    defaultTtlSeconds: row.default_ttl_seconds,
    maxTtlSeconds: row.max_ttl_seconds,
    maxLeases: row.max_leases,
    openLeases: counts.open,
    revokeFailed: counts.failed,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function listDynamicSecrets(ctx: Ctx, input: EnvTarget): Promise<DynamicSecret[]> {
  const { env } = await authorizeEnv(ctx, { ...input, need: 'read' });
  const rows = await ctx.deps.db
    .selectFrom('dynamic_secrets as d')
    .innerJoin('connections as c', 'c.id', 'd.connection_id')
    .selectAll('d')
    .select(['c.name as c_name', 'c.kind as c_kind', 'c.id as c_id'])
    .where('d.environment_id', '=', env.id)
    .orderBy('d.name')
    .execute();
  const counts = await leaseCounts(
    ctx.deps.db,
    rows.map((r) => r.id),
  );
  return rows.map((r) =>
    present(ctx.deps, r, env.name, { name: r.c_name, kind: r.c_kind, id: r.c_id } as ConnectionRow, counts.get(r.id)!),
  );
}

export async function getDynamicSecret(ctx: Ctx, input: EnvTarget & { name: string }): Promise<DynamicSecret> {
  const { env } = await authorizeEnv(ctx, { ...input, need: 'read' });
  const { row, conn } = await findDynamicSecret(ctx.deps.db, env.id, input.name);
  return present(ctx.deps, row, env.name, conn, (await leaseCounts(ctx.deps.db, [row.id])).get(row.id)!);
}

export interface DynamicSecretInput {
  connection: string;
  create: Statement[];
  revoke?: Statement[] | undefined;
  keys?: Partial<Record<'username' | 'password' | 'host' | 'port' | 'database', string>> | undefined;
  defaultTtlSeconds?: number | undefined;
  maxTtlSeconds?: number | undefined;
  maxLeases?: number | undefined;
}

export async function putDynamicSecret(
  ctx: Ctx,
  input: EnvTarget & { name: string } & DynamicSecretInput,
): Promise<DynamicSecret> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'write' });
  // A connection of another project is not found among this one's (D71 details: 400, field connection).
  const conn = await findConnection(ctx.deps.db, access.project.id, input.connection).catch((e) => {
    if (e instanceof AppError && e.code === 'NOT_FOUND') {
      throw validation('connection', `this project has no connection "${input.connection}"`);
    }
    throw e;
  });
  const engine = ctx.deps.engines.engine(conn.kind);
  const bad = engine.checkStatements(input.create);
  if (bad) throw validation('create', bad);
  const revoke = input.revoke && input.revoke.length > 0 ? input.revoke : null;
  if (revoke) {
    const badRevoke = engine.checkStatements(revoke);
    if (badRevoke) throw validation('revoke', badRevoke);
  }
  if (!JSON.stringify(input.create).includes('{{username}}')) {
    throw validation('create', 'the create statements must use {{username}} (svcenv makes the user name)');
  }
  const keys = input.keys ?? {};
  const defaultTtl = input.defaultTtlSeconds ?? LEASE_TTL.default;
  const maxTtl = input.maxTtlSeconds ?? Math.max(LEASE_TTL.maxDefault, defaultTtl);
  if (defaultTtl > maxTtl) throw validation('defaultTtlSeconds', 'defaultTtlSeconds must not exceed maxTtlSeconds');
  const names = Object.values({ ...leaseKeyNames({ name: input.name, keys: '{}' }), ...keys });
  if (new Set(names).size !== names.length) throw validation('keys', 'two values would get the same variable name');
  if (conn.kind === 'redis' && keys.database) throw validation('keys.database', 'a redis connection has no database');
  const now = ctx.deps.clock.now().toISOString();
  const values = {
    connection_id: conn.id,
    create_statements: JSON.stringify(input.create),
    revoke_statements: revoke ? JSON.stringify(revoke) : null,
    keys: JSON.stringify(keys),
    default_ttl_seconds: defaultTtl,
    max_ttl_seconds: maxTtl,
    max_leases: input.maxLeases ?? MAX_LEASES.default,
    updated_at: now,
  };
  let created = false;
  await ctx.deps.db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('dynamic_secrets')
      .select('id')
      .where('environment_id', '=', env.id)
      .where('name', '=', input.name)
      .executeTakeFirst();
    if (existing) await trx.updateTable('dynamic_secrets').set(values).where('id', '=', existing.id).execute();
    else {
      created = true;
      await trx
        .insertInto('dynamic_secrets')
        .values({
          id: newId(),
          project_id: access.project.id,
          environment_id: env.id,
          name: input.name,
          created_by: ctx.principal.userId,
          created_at: now,
          ...values,
        })
        .execute();
    }
    await recordChange(trx, ctx, {
      action: created ? 'dynamic_secret.create' : 'dynamic_secret.update',
      projectId: access.project.id,
      targetEnv: env.name,
      targetKey: input.name,
      detail: {
        connection: conn.name,
        defaultTtlSeconds: defaultTtl,
        maxTtlSeconds: maxTtl,
        maxLeases: values.max_leases,
      },
    });
  });
  return getDynamicSecret(ctx, { projectId: input.projectId, env: input.env, name: input.name });
}

/** D71: DELETE revokes every open lease first; a revocation the database refuses keeps the declaration (502). */
export async function deleteDynamicSecret(ctx: Ctx, input: EnvTarget & { name: string }): Promise<void> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'write' });
  const { row } = await findDynamicSecret(ctx.deps.db, env.id, input.name);
  const failed = await revokeLeasesNow(ctx, access.project, { dynamicSecretId: row.id });
  if (failed > 0) {
    throw new AppError(
      'UPSTREAM_FAILED',
      `${failed} lease(s) of "${row.name}" could not be revoked (the database refused or is away); they are retried, and the dynamic secret stays until they are revoked`,
    );
  }
  await ctx.deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('leases').where('dynamic_secret_id', '=', row.id).execute();
    await trx.deleteFrom('dynamic_secrets').where('id', '=', row.id).execute();
    await recordChange(trx, ctx, {
      action: 'dynamic_secret.delete',
      projectId: access.project.id,
      targetEnv: env.name,
      targetKey: row.name,
    });
  });
}
