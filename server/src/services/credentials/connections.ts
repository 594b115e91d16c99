import { type Connection, DEFAULT_PORTS } from '@svcenv/contract';
import type { Selectable } from 'kysely';
import { isLoopback } from '../../config.js';
import type { Db } from '../../db/index.js';
import type { ConnectionsTable } from '../../db/schema.js';
import { AppError, isUniqueViolation, notFound, validation } from '../../lib/errors.js';
import { failpoint } from '../../lib/failpoints.js';
import { newId } from '../../lib/ids.js';
import { makePassword } from '../../managed/credentials.js';
import { type Engine, ManagedDbError, type ManagedTarget } from '../../managed/engine.js';
import { authorizeProject, type ProjectRow } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import type { Deps } from '../core/deps.js';

/**
 * D70: a project's connections to the databases whose users svcenv manages. Owners and project Admins only;
 * the admin password is sealed with the project key (ProjectKeyring.sealCredential) and never leaves a
 * service: no answer, log line or audit entry holds it. Every use opens it into a ManagedTarget for the
 * engines (managed/), which check the address rule again on what DNS answers at that moment.
 */
export type ConnectionRow = Selectable<ConnectionsTable>;
type Kind = ConnectionRow['kind'];

const passwordPlace = (id: string) => `connection/${id}#password`;
const pendingPlace = (id: string) => `connection/${id}#pending`;

export function presentConnection(row: ConnectionRow, usedBy: number): Connection {
  return {
    name: row.name,
    kind: row.kind,
    host: row.host,
    port: row.port,
    database: row.database,
    username: row.username,
    tls: { mode: row.tls_mode, ca: row.tls_ca },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    rootRotatedAt: row.root_rotated_at,
    usedBy,
  };
}

const keyed = (project: ProjectRow) => ({ projectId: project.id, wrapped: project.wrapped_key });

/**
 * What the engines are given for a connection: its address and login with the password opened, and the pool
 * its admin connections are kept in. `pending`: the password of a rotate-root in flight, tried when the kept
 * one is refused (the database may already have it).
 */
export function connectionTarget(
  deps: Pick<Deps, 'keyring'>,
  project: ProjectRow,
  row: ConnectionRow,
  which: 'password' | 'pending' = 'password',
): ManagedTarget {
  const sealed = which === 'pending' ? row.pending_password_sealed : row.password_sealed;
  if (sealed === null) throw new Error('no pending password');
  return {
    host: row.host,
    port: row.port,
    database: row.database,
    username: row.username,
    password: deps.keyring.openCredential(
      keyed(project),
      which === 'pending' ? pendingPlace(row.id) : passwordPlace(row.id),
      sealed,
    ),
    tls: { mode: row.tls_mode, ca: row.tls_ca },
    poolKey: `${row.id}:${row.version}:${which}`,
  };
}

/**
 * Runs `fn` against the connection's database as its admin user. When the database refuses the kept password
 * and a rotate-root left a pending one (the process died after the database changed, before the row kept the
 * new password), the pending one is tried, and kept when it works: no password is ever lost (D70).
 */
export async function withConnection<T>(
  ctx: Pick<Ctx, 'deps' | 'principal'>,
  project: ProjectRow,
  row: ConnectionRow,
  fn: (engine: Engine, target: ManagedTarget) => Promise<T>,
): Promise<T> {
  const engine = ctx.deps.engines.engine(row.kind);
  try {
    return await fn(engine, connectionTarget(ctx.deps, project, row));
  } catch (e) {
    if (!(e instanceof ManagedDbError) || e.failure !== 'auth' || row.pending_password_sealed === null) throw e;
    const result = await fn(engine, connectionTarget(ctx.deps, project, row, 'pending'));
    await keepPendingPassword(ctx, project, row);
    return result;
  }
}

/**
 * A rotate-root that the database took but the row did not (the process died in between): the pending
 * password becomes the kept one, audited as the rotation it finishes. Conditional on the pending value, so
 * two instances finishing it at once write it once.
 */
async function keepPendingPassword(
  ctx: Pick<Ctx, 'deps' | 'principal'>,
  project: ProjectRow,
  row: ConnectionRow,
): Promise<void> {
  const { deps } = ctx;
  const password = deps.keyring.openCredential(keyed(project), pendingPlace(row.id), row.pending_password_sealed!);
  const now = deps.clock.now().toISOString();
  await deps.db.transaction().execute(async (trx) => {
    const done = await trx
      .updateTable('connections')
      .set({
        password_sealed: deps.keyring.sealCredential(keyed(project), passwordPlace(row.id), password),
        pending_password_sealed: null,
        version: row.version + 1,
        root_rotated_at: now,
        updated_at: now,
      })
      .where('id', '=', row.id)
      .where('pending_password_sealed', '=', row.pending_password_sealed)
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) === 0) return;
    await recordChange(trx, ctx, {
      action: 'connection.rotate_root',
      projectId: project.id,
      detail: { name: row.name, username: row.username, finished: 'after an interrupted rotation' },
    });
  });
  await deps.engines.forget(row.id);
}

/** A connection of the project by name (404 names it). */
export async function findConnection(db: Db, projectId: string, name: string): Promise<ConnectionRow> {
  const row = await db
    .selectFrom('connections')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('name', '=', name)
    .executeTakeFirst();
  if (!row) throw notFound(`connection "${name}"`);
  return row;
}

/** How many dynamic secrets and rotations use each connection of the project. */
async function usage(db: Db, connectionIds: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>(connectionIds.map((id) => [id, 0]));
  if (connectionIds.length === 0) return out;
  for (const table of ['dynamic_secrets', 'rotations'] as const) {
    const rows = await db
      .selectFrom(table)
      .select(['connection_id'])
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('connection_id', 'in', connectionIds)
      .groupBy('connection_id')
      .execute();
    for (const r of rows) out.set(r.connection_id, (out.get(r.connection_id) ?? 0) + Number(r.n));
  }
  return out;
}

/** D70's address rule when a connection is saved: link-local and metadata never, CONNECTIONS_ALLOWED_CIDRS. */
async function checkHost(deps: Deps, host: string): Promise<void> {
  try {
    await deps.engines.checkHost(host);
  } catch (e) {
    // A name that does not resolve yet may be fine later (the test button tells); a refused address never is.
    if (e instanceof ManagedDbError && e.failure === 'address') throw validation('host', e.message);
    if (!(e instanceof ManagedDbError)) throw e;
  }
}

/** D70: TLS `disable` is for loopback hosts, or with CONNECTIONS_ALLOW_PLAIN=true. */
function checkTls(deps: Deps, host: string, tls: { mode: string; ca?: string | null | undefined }): void {
  if (tls.mode === 'disable' && !isLoopback(host) && !deps.config.CONNECTIONS_ALLOW_PLAIN) {
    throw validation(
      'tls.mode',
      'tls mode "disable" is allowed only for a loopback host (set CONNECTIONS_ALLOW_PLAIN=true to allow it elsewhere)',
    );
  }
  if (tls.ca && tls.mode !== 'verify') throw validation('tls.ca', 'a CA is used only with tls mode "verify"');
  if (tls.ca && !tls.ca.includes('-----BEGIN CERTIFICATE-----')) {
    throw validation('tls.ca', 'ca must be a PEM certificate (-----BEGIN CERTIFICATE-----)');
  }
}

function checkDatabase(kind: Kind, database: string | null | undefined): void {
  if (kind === 'redis' && database) throw validation('database', 'a redis connection has no database');
}

const nameTaken = () => new AppError('CONFLICT', 'a connection with this name already exists in the project', 'name');

export async function listConnections(ctx: Ctx, input: { projectId: string }): Promise<Connection[]> {
  const access = await authorizeProject(ctx, input.projectId, 'admin');
  const rows = await ctx.deps.db
    .selectFrom('connections')
    .selectAll()
    .where('project_id', '=', access.project.id)
    .orderBy('name')
    .execute();
  const used = await usage(
    ctx.deps.db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => presentConnection(r, used.get(r.id) ?? 0));
}

export async function getConnection(ctx: Ctx, input: { projectId: string; name: string }): Promise<Connection> {
  const access = await authorizeProject(ctx, input.projectId, 'admin');
  const row = await findConnection(ctx.deps.db, access.project.id, input.name);
  return presentConnection(row, (await usage(ctx.deps.db, [row.id])).get(row.id) ?? 0);
}

export interface ConnectionInput {
  name: string;
  kind: Kind;
  host: string;
  port?: number | undefined;
  database?: string | null | undefined;
  username: string;
  password: string;
  tls?: { mode: 'disable' | 'require' | 'verify'; ca?: string | null | undefined } | undefined;
}

export async function createConnection(ctx: Ctx, input: { projectId: string } & ConnectionInput): Promise<Connection> {
  const access = await authorizeProject(ctx, input.projectId, 'admin');
  const tls = input.tls ?? { mode: 'require' as const, ca: null };
  checkDatabase(input.kind, input.database);
  checkTls(ctx.deps, input.host, tls);
  await checkHost(ctx.deps, input.host);
  const id = newId();
  const now = ctx.deps.clock.now().toISOString();
  const row: ConnectionRow = {
    id,
    project_id: access.project.id,
    name: input.name,
    kind: input.kind,
    host: input.host,
    port: input.port ?? DEFAULT_PORTS[input.kind],
    database: input.database ?? null,
    username: input.username,
    password_sealed: ctx.deps.keyring.sealCredential(keyed(access.project), passwordPlace(id), input.password),
    pending_password_sealed: null,
    tls_mode: tls.mode,
    tls_ca: tls.ca ?? null,
    version: 1,
    created_by: ctx.principal.userId,
    created_at: now,
    updated_at: now,
    root_rotated_at: null,
  };
  try {
    await ctx.deps.db.transaction().execute(async (trx) => {
      await trx.insertInto('connections').values(row).execute();
      await recordChange(trx, ctx, {
        action: 'connection.create',
        projectId: access.project.id,
        // D70: where and as whom, never the password.
        detail: { name: row.name, kind: row.kind, host: row.host, port: row.port, username: row.username },
      });
    });
  } catch (e) {
    throw isUniqueViolation(e) ? nameTaken() : e;
  }
  return presentConnection(row, 0);
}

export async function updateConnection(
  ctx: Ctx,
  input: { projectId: string; name: string } & Partial<Omit<ConnectionInput, 'name' | 'kind'>>,
): Promise<Connection> {
  const access = await authorizeProject(ctx, input.projectId, 'admin');
  const row = await findConnection(ctx.deps.db, access.project.id, input.name);
  const host = input.host ?? row.host;
  const tls = input.tls ?? { mode: row.tls_mode, ca: row.tls_ca };
  checkDatabase(row.kind, input.database);
  checkTls(ctx.deps, host, tls);
  if (input.host !== undefined) await checkHost(ctx.deps, host);
  const next: Partial<ConnectionRow> = {
    host,
    port: input.port ?? row.port,
    database: input.database === undefined ? row.database : input.database,
    username: input.username ?? row.username,
    tls_mode: tls.mode,
    tls_ca: tls.ca ?? null,
    version: row.version + 1,
    updated_at: ctx.deps.clock.now().toISOString(),
    // D70: a PATCH without a password keeps it; one with a password replaces it (and any rotation in flight).
    ...(input.password !== undefined
      ? {
          password_sealed: ctx.deps.keyring.sealCredential(
            keyed(access.project),
            passwordPlace(row.id),
            input.password,
          ),
          pending_password_sealed: null,
        }
      : {}),
  };
  const fields = Object.keys(input).filter(
    (k) => !['projectId', 'name'].includes(k) && input[k as keyof typeof input] !== undefined,
  );
  await ctx.deps.db.transaction().execute(async (trx) => {
    await trx.updateTable('connections').set(next).where('id', '=', row.id).execute();
    await recordChange(trx, ctx, {
      action: 'connection.update',
      projectId: access.project.id,
      detail: { name: row.name, fields },
    });
  });
  await ctx.deps.engines.forget(row.id);
  const updated = await findConnection(ctx.deps.db, access.project.id, row.name);
  return presentConnection(updated, (await usage(ctx.deps.db, [row.id])).get(row.id) ?? 0);
}

export async function deleteConnection(ctx: Ctx, input: { projectId: string; name: string }): Promise<void> {
  const access = await authorizeProject(ctx, input.projectId, 'admin');
  const row = await findConnection(ctx.deps.db, access.project.id, input.name);
  const used = (await usage(ctx.deps.db, [row.id])).get(row.id) ?? 0;
  if (used > 0) {
    throw new AppError(
      'CONFLICT',
      `connection "${row.name}" is used by ${used} dynamic secret(s) or rotation(s); delete those first`,
      'name',
    );
  }
  await ctx.deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('connections').where('id', '=', row.id).execute();
    await recordChange(trx, ctx, {
      action: 'connection.delete',
      projectId: access.project.id,
      detail: { name: row.name },
    });
  });
  await ctx.deps.engines.forget(row.id);
}

/** D70 `test`: logs in as the connection's user and out; the message says what happened, in words. */
export async function testConnection(
  ctx: Ctx,
  input: { projectId: string; name: string },
): Promise<{ ok: boolean; message: string }> {
  const access = await authorizeProject(ctx, input.projectId, 'admin');
  const row = await findConnection(ctx.deps.db, access.project.id, input.name);
  try {
    // A connection of its own, not the pool: the test proves a login works now.
    await withConnection(ctx, access.project, row, (engine, target) => engine.test({ ...target, poolKey: undefined }));
    return { ok: true, message: `logged in to ${describe(row)} as "${row.username}" and out again` };
  } catch (e) {
    if (!(e instanceof ManagedDbError)) throw e;
    return { ok: false, message: `could not log in to ${describe(row)} as "${row.username}": ${e.message}` };
  }
}

const describe = (row: ConnectionRow) =>
  `${row.kind === 'postgres' ? 'PostgreSQL' : row.kind === 'mysql' ? 'MySQL' : 'Redis'} at ${row.host}:${row.port}`;

/**
 * D70 rotate-root: a new random password for the connection's own user, so that no person knows it any more.
 * The new password is sealed and recorded as pending before the database changes; once the database has it
 * and a login with it works, the row keeps it. A process that dies in between leaves the pending password,
 * which withConnection tries (and keeps) when the old one is refused, so the password is never lost.
 */
export async function rotateRoot(ctx: Ctx, input: { projectId: string; name: string }): Promise<Connection> {
  const access = await authorizeProject(ctx, input.projectId, 'admin');
  let row = await findConnection(ctx.deps.db, access.project.id, input.name);
  const password = makePassword();
  const pendingSealed = ctx.deps.keyring.sealCredential(keyed(access.project), pendingPlace(row.id), password);
  await ctx.deps.db
    .updateTable('connections')
    .set({ pending_password_sealed: pendingSealed })
    .where('id', '=', row.id)
    .execute();
  row = { ...row, pending_password_sealed: pendingSealed };
  const current = row;
  await upstream(() =>
    withConnection(ctx, access.project, current, async (engine, target) => {
      await engine.setPassword(target, target.username, password);
      await engine.login({ ...target, poolKey: undefined }, target.username, password);
    }),
  );
  failpoint('rotate-root-after-change');
  const now = ctx.deps.clock.now().toISOString();
  await ctx.deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('connections')
      .set({
        password_sealed: ctx.deps.keyring.sealCredential(keyed(access.project), passwordPlace(row.id), password),
        pending_password_sealed: null,
        version: row.version + 1,
        root_rotated_at: now,
        updated_at: now,
      })
      .where('id', '=', row.id)
      .execute();
    await recordChange(trx, ctx, {
      action: 'connection.rotate_root',
      projectId: access.project.id,
      detail: { name: row.name, username: row.username },
    });
  });
  await ctx.deps.engines.forget(row.id);
  const updated = await findConnection(ctx.deps.db, access.project.id, row.name);
  return presentConnection(updated, (await usage(ctx.deps.db, [row.id])).get(row.id) ?? 0);
}

/** A managed database's failure as the API answers it: 502 UPSTREAM_FAILED with its message (D71). */
export async function upstream<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ManagedDbError) throw new AppError('UPSTREAM_FAILED', e.message);
    throw e;
  }
}
