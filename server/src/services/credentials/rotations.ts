import type { Rotation } from '@svcenv/contract';
import type { Selectable } from 'kysely';
import type { RotationsTable } from '../../db/schema.js';
import { AppError, notFound, validation } from '../../lib/errors.js';
import { failpoint } from '../../lib/failpoints.js';
import { newId } from '../../lib/ids.js';
import { makePassword } from '../../managed/credentials.js';
import { ManagedDbError } from '../../managed/engine.js';
import { authorizeEnv, type EnvFull, type EnvTarget, type ProjectRow } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import type { Deps } from '../core/deps.js';
import { type Principal, systemActor } from '../core/principal.js';
import { envSealer, type VarType } from '../core/values.js';
import { writeEnvChanges } from '../variables/variables.js';
import { type ConnectionRow, findConnection, withConnection } from './connections.js';

/**
 * D72: a secret variable bound to a database user whose password svcenv changes every interval (and when
 * asked). A rotation never loses a password: the new one is sealed and recorded as pending before the
 * database changes; the revision that writes it to the variable clears it. A process that dies in between
 * leaves the pending record, and the next attempt (the job looks for pending records first) logs in with the
 * pending password: when that works the database already has it, and only the revision is written; when it
 * does not, the password is set again. A database change that fails leaves the variable as it was, with
 * `lastError`, and is retried with backoff.
 */
type RotationRow = Selectable<RotationsTable>;

const pendingPlace = (id: string) => `rotation/${id}#pending`;
const keyed = (project: ProjectRow) => ({ projectId: project.id, wrapped: project.wrapped_key });
/** Retry backoff of a failed rotation: 30 s doubling, at most an hour apart. */
const retryBackoffMs = (attempt: number) => Math.min(3_600_000, 30_000 * 2 ** Math.max(0, attempt - 1));

const usernamesOf = (row: RotationRow) => JSON.parse(row.usernames) as string[];

function present(row: RotationRow, conn: Pick<ConnectionRow, 'name'>): Rotation {
  const usernames = usernamesOf(row);
  return {
    key: row.key,
    connection: conn.name,
    username: usernames[row.active_index] ?? usernames[0]!,
    usernames,
    strategy: row.strategy,
    intervalSeconds: row.interval_seconds,
    lastRotatedAt: row.last_rotated_at,
    nextRotationAt: row.next_rotation_at,
    lastError: row.last_error,
  };
}

/** How long one rotation holds its row: a login, the change, a login with the new password, and margin. */
const lockMs = (deps: Pick<Deps, 'config'>) => deps.config.CONNECTIONS_TIMEOUT_MS * 7 + 10_000;

export async function listRotations(ctx: Ctx, input: EnvTarget): Promise<Rotation[]> {
  const { env } = await authorizeEnv(ctx, { ...input, need: 'read' });
  const rows = await ctx.deps.db
    .selectFrom('rotations as r')
    .innerJoin('connections as c', 'c.id', 'r.connection_id')
    .selectAll('r')
    .select('c.name as connection_name')
    .where('r.environment_id', '=', env.id)
    .orderBy('r.key')
    .execute();
  return rows.map((r) => present(r, { name: r.connection_name }));
}

async function findRotation(ctx: Ctx, env: EnvFull, key: string): Promise<RotationRow> {
  const row = await ctx.deps.db
    .selectFrom('rotations')
    .selectAll()
    .where('environment_id', '=', env.id)
    .where('key', '=', key)
    .executeTakeFirst();
  if (!row) throw notFound(`rotation of "${key}"`);
  return row;
}

export async function putRotation(
  ctx: Ctx,
  input: EnvTarget & {
    key: string;
    connection: string;
    username?: string | undefined;
    usernames?: [string, string] | undefined;
    intervalSeconds: number | null;
    strategy: 'single' | 'alternate';
  },
): Promise<Rotation> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'write' });
  const conn = await findConnection(ctx.deps.db, access.project.id, input.connection).catch((e) => {
    if (e instanceof AppError && e.code === 'NOT_FOUND') {
      throw validation('connection', `this project has no connection "${input.connection}"`);
    }
    throw e;
  });
  const usernames = input.strategy === 'alternate' ? input.usernames! : [input.username!];
  if (usernames.includes(conn.username)) {
    throw validation(
      input.strategy === 'alternate' ? 'usernames' : 'username',
      `"${conn.username}" is the connection's own user: rotate it with rotate-root (D70)`,
    );
  }
  const variable = await ctx.deps.db
    .selectFrom('variables')
    .select('type')
    .where('environment_id', '=', env.id)
    .where('key', '=', input.key)
    .executeTakeFirst();
  if (variable && variable.type !== 'secret') {
    throw validation('key', `"${input.key}" is a plain variable; a rotated password must be a secret`);
  }
  const now = ctx.deps.clock.now();
  const values = {
    connection_id: conn.id,
    strategy: input.strategy,
    usernames: JSON.stringify(usernames),
    interval_seconds: input.intervalSeconds,
    next_rotation_at:
      input.intervalSeconds === null ? null : new Date(now.getTime() + input.intervalSeconds * 1000).toISOString(),
    updated_at: now.toISOString(),
  };
  await ctx.deps.db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('rotations')
      .select(['id', 'usernames'])
      .where('environment_id', '=', env.id)
      .where('key', '=', input.key)
      .executeTakeFirst();
    if (existing) {
      // Other users than before: the rotation in flight (if any) and which one is in use start over.
      const same = existing.usernames === values.usernames;
      await trx
        .updateTable('rotations')
        .set({
          ...values,
          ...(same ? {} : { active_index: 0, pending_password_sealed: null, pending_index: null, last_error: null }),
        })
        .where('id', '=', existing.id)
        .execute();
    } else {
      await trx
        .insertInto('rotations')
        .values({
          id: newId(),
          project_id: access.project.id,
          environment_id: env.id,
          key: input.key,
          active_index: 0,
          last_rotated_at: null,
          last_error: null,
          attempts: 0,
          pending_password_sealed: null,
          pending_index: null,
          locked_until: null,
          created_by: ctx.principal.userId,
          created_at: now.toISOString(),
          ...values,
        })
        .execute();
    }
    await recordChange(trx, ctx, {
      action: existing ? 'rotation.update' : 'rotation.create',
      projectId: access.project.id,
      targetEnv: env.name,
      targetKey: input.key,
      detail: { connection: conn.name, strategy: input.strategy, usernames, intervalSeconds: input.intervalSeconds },
    });
  });
  return present(await findRotation(ctx, env, input.key), conn);
}

export async function deleteRotation(ctx: Ctx, input: EnvTarget & { key: string }): Promise<void> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'write' });
  const row = await findRotation(ctx, env, input.key);
  if (row.pending_password_sealed !== null) {
    // The database may hold a password the variable does not: finishing first loses nothing.
    throw new AppError(
      'CONFLICT',
      `a rotation of "${row.key}" is unfinished; rotate it now (it finishes the rotation) before removing it`,
      'key',
    );
  }
  await ctx.deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('rotations').where('id', '=', row.id).execute();
    await recordChange(trx, ctx, {
      action: 'rotation.delete',
      projectId: access.project.id,
      targetEnv: env.name,
      targetKey: row.key,
    });
  });
}

/** D72 `POST .../rotate`: 200 with the rotation once its revision is written, or 502 with `lastError` kept. */
export async function rotateNow(ctx: Ctx, input: EnvTarget & { key: string }): Promise<Rotation> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'write' });
  const row = await findRotation(ctx, env, input.key);
  const outcome = await rotate(ctx.deps, access.project, env, row, ctx.principal);
  if (outcome === 'locked') {
    throw new AppError('CONFLICT', `"${row.key}" is being rotated right now; look again in a moment`, 'key');
  }
  if (outcome instanceof ManagedDbError) throw new AppError('UPSTREAM_FAILED', outcome.message);
  const conn = await ctx.deps.db
    .selectFrom('connections')
    .select('name')
    .where('id', '=', row.connection_id)
    .executeTakeFirstOrThrow();
  return present(await findRotation(ctx, env, input.key), conn);
}

/**
 * One rotation (the job's or a POST's): claim the row, take the pending password or record a new one as
 * pending, make the database have it (unless it already does: a login with it works), log in with it, and
 * write it to the variable in one revision that also clears the pending record.
 */
async function rotate(
  deps: Deps,
  project: ProjectRow,
  env: EnvFull,
  row: RotationRow,
  actor: Principal,
): Promise<'done' | 'locked' | ManagedDbError> {
  const nowMs = deps.clock.now().getTime();
  const claim = await deps.db
    .updateTable('rotations')
    .set({ locked_until: new Date(nowMs + lockMs(deps)).toISOString() })
    .where('id', '=', row.id)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', new Date(nowMs).toISOString())]))
    .executeTakeFirst();
  if (Number(claim.numUpdatedRows) === 0) return 'locked';
  const fresh = await deps.db.selectFrom('rotations').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
  const conn = await deps.db
    .selectFrom('connections')
    .selectAll()
    .where('id', '=', fresh.connection_id)
    .executeTakeFirstOrThrow();
  const usernames = usernamesOf(fresh);
  let index: number;
  let password: string;
  if (fresh.pending_password_sealed !== null && fresh.pending_index !== null) {
    index = fresh.pending_index;
    password = deps.keyring.openCredential(keyed(project), pendingPlace(fresh.id), fresh.pending_password_sealed);
  } else {
    index = fresh.strategy === 'alternate' ? 1 - fresh.active_index : 0;
    password = makePassword();
    await deps.db
      .updateTable('rotations')
      .set({
        pending_password_sealed: deps.keyring.sealCredential(keyed(project), pendingPlace(fresh.id), password),
        pending_index: index,
      })
      .where('id', '=', fresh.id)
      .execute();
  }
  const username = usernames[index]!;
  const ctx = { deps, principal: actor };
  try {
    await withConnection(ctx, project, conn, async (engine, target) => {
      const oneOff = { ...target, poolKey: undefined };
      // A pending password the database already took (an attempt that died after the change) logs in.
      const already = await engine.login(oneOff, username, password).then(
        () => true,
        (e: unknown) => {
          if (e instanceof ManagedDbError && e.failure === 'auth') return false;
          throw e;
        },
      );
      if (already) return;
      await engine.setPassword(target, username, password);
      // D72 details: a new password is tried by logging in with it before the revision is written.
      await engine.login(oneOff, username, password);
    });
  } catch (e) {
    if (!(e instanceof ManagedDbError)) throw e;
    const attempts = fresh.attempts + 1;
    await deps.db
      .updateTable('rotations')
      .set({
        last_error: e.message.slice(0, 500),
        attempts,
        next_rotation_at: new Date(deps.clock.now().getTime() + retryBackoffMs(attempts)).toISOString(),
        locked_until: null,
      })
      .where('id', '=', fresh.id)
      .execute();
    return e;
  }
  failpoint('rotation-after-change');
  const now = deps.clock.now();
  const sealer = envSealer(deps.keyring, { project }, env);
  const set: { key: string; value: string; type: VarType }[] = [{ key: fresh.key, value: password, type: 'secret' }];
  if (fresh.strategy === 'alternate') set.push({ key: `${fresh.key}_USERNAME`, value: username, type: 'plain' });
  await deps.db.transaction().execute(async (trx) => {
    await writeEnvChanges(trx, { ...ctx, epoch: undefined }, sealer, env, { set, delete: [] }, (k) => ({
      action: 'var.rotate',
      projectId: project.id,
      targetEnv: env.name,
      targetKey: fresh.key,
      // D72: the audit entry names the user, never a password.
      detail: { username, strategy: fresh.strategy, ...(actor.system ? { scheduled: true } : {}) },
      event: { created: k.created, updated: k.updated },
    }));
    await trx
      .updateTable('rotations')
      .set({
        active_index: index,
        pending_password_sealed: null,
        pending_index: null,
        last_rotated_at: now.toISOString(),
        next_rotation_at:
          fresh.interval_seconds === null
            ? null
            : new Date(now.getTime() + fresh.interval_seconds * 1000).toISOString(),
        last_error: null,
        attempts: 0,
        locked_until: null,
        updated_at: now.toISOString(),
      })
      .where('id', '=', fresh.id)
      .execute();
  });
  // D43: the revision wakes held pulls and `run --watch` clients (recordChange notifies; SQLite's watch polls).
  return 'done';
}

/**
 * The rotation job's run (one instance at a time, jobs/task-lease.ts): every rotation that is due, and first
 * every one left pending by an attempt that did not finish (its lock lapsed), whatever its schedule says.
 */
export async function rotateDue(deps: Deps): Promise<number> {
  const now = deps.clock.now().toISOString();
  const due = await deps.db
    .selectFrom('rotations')
    .selectAll()
    .where((eb) =>
      eb.and([
        eb.or([eb('next_rotation_at', '<=', now), eb('pending_password_sealed', 'is not', null)]),
        eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]),
      ]),
    )
    .orderBy('next_rotation_at')
    .limit(50)
    .execute();
  let done = 0;
  for (const row of due) {
    const project = await deps.db
      .selectFrom('projects')
      .selectAll()
      .where('id', '=', row.project_id)
      .executeTakeFirst();
    const env = await deps.db
      .selectFrom('environments')
      .select([
        'id',
        'project_id',
        'name',
        'protected',
        'color',
        'position',
        'revision',
        'require_approval',
        'override_rev',
      ])
      .where('id', '=', row.environment_id)
      .executeTakeFirst();
    if (!project || !env) continue;
    const outcome = await rotate(deps, project, env, row, systemActor(project.workspace_id, 'svcenv (rotation)'));
    if (outcome === 'done') done++;
  }
  return done;
}
