import type { CreatedLease, Lease, LeaseState } from '@svcenv/contract';
import type { Selectable, UpdateQueryBuilder, UpdateResult } from 'kysely';
import { compiledStatement } from '../../db/hot-query.js';
import type { Db } from '../../db/index.js';
import type { Database, LeasesTable } from '../../db/schema.js';
import { AppError, forbidden, notFound, rateLimited, validation } from '../../lib/errors.js';
import { failpoint } from '../../lib/failpoints.js';
import { newId } from '../../lib/ids.js';
import { makePassword, makeUsername } from '../../managed/credentials.js';
import { ManagedDbError, type StatementVars } from '../../managed/engine.js';
import { authorizeEnv, envPermission, type ProjectRow } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import type { Deps } from '../core/deps.js';
import { type Principal, systemActor } from '../core/principal.js';
import { type ConnectionRow, upstream, withConnection } from './connections.js';
import { findDynamicSecret, leaseKeyNames, revokeStatements, statementsOf } from './declarations.js';

/**
 * D71 leases: a database user made for one client and removed when its lease ends.
 *
 * A lease is a promise made to a database outside ours, so its row is written first (`creating`), before
 * anything the create statements do can outlive the request (on PostgreSQL beside the first statement, in a
 * transaction committed only once the row is: Engine.createUser): a process that dies after the database
 * made the user and before it recorded the lease leaves a row the revocation job finds (its `next_attempt_at` is the moment it counts as abandoned) and
 * removes the user. A lease is marked `revoked` or `expired` only after its revoke statements ran (or the
 * user was found gone); a revocation that fails is `revoke_failed`, retried with backoff for as long as it
 * takes, never given up.
 */
type LeaseRow = Selectable<LeasesTable>;

/** Leases that may still have a user in the database. */
export const OPEN_STATES = ['creating', 'active', 'revoking', 'revoke_failed'] as const satisfies LeaseState[];
/**
 * When a `creating` lease counts as abandoned by a process that died: after the longest its create could take
 * (a login, every statement at its bound, the engine's own grant) and a margin.
 */
const abandonedAfterMs = (deps: Pick<Deps, 'config'>, statements: number) =>
  deps.config.CONNECTIONS_TIMEOUT_MS * (3 + 2 * (statements + 1)) + 10_000;
/** A revocation in progress holds its lease this long; a process that dies mid-way frees it by this time. */
const REVOKE_LOCK_MS = 60_000;
/** Retry backoff of a failed revocation: 5 s, doubling, at most 5 minutes apart, for ever (D71). */
export const revokeBackoffMs = (attempt: number) => Math.min(300_000, 5_000 * 2 ** Math.max(0, attempt - 1));

const iso = (ms: number) => new Date(ms).toISOString();

/** A lease row's columns, in the order leaseQueries' insert takes its values. */
const LEASE_COLUMNS = [
  'id',
  'project_id',
  'environment_id',
  'dynamic_secret_id',
  'connection_id',
  'username',
  'state',
  'revoke_statements',
  'created_by',
  'created_by_name',
  'token_id',
  'created_at',
  'expires_at',
  'max_expires_at',
  'next_attempt_at',
  'locked_until',
  'attempts',
  'last_error',
  'end_reason',
  'ended_at',
] as const satisfies readonly (keyof LeaseRow)[];

/**
 * A lease's record and activation, compiled once per database (db/hot-query.ts compiledStatement) and run in
 * the write group's transaction: at several leases a second, building and compiling them cost more than
 * running them on SQLite.
 */
function makeLeaseQueries(db: Db) {
  return {
    openCount: compiledStatement(1, (dynamicSecretId: string) =>
      db
        .selectFrom('leases')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('dynamic_secret_id', '=', dynamicSecretId)
        .where('state', 'in', OPEN_STATES),
    ),
    insert: compiledStatement(LEASE_COLUMNS.length, (...values: unknown[]) =>
      db
        .insertInto('leases')
        .values(Object.fromEntries(LEASE_COLUMNS.map((c, i) => [c, values[i]])) as unknown as LeaseRow),
    ),
    activate: compiledStatement(2, (id: string, nextAttemptAt: string) =>
      db
        .updateTable('leases')
        .set({ state: 'active', next_attempt_at: nextAttemptAt })
        .where('id', '=', id)
        .where('state', '=', 'creating'),
    ),
  };
}
const leaseQueriesOf = new WeakMap<Db, ReturnType<typeof makeLeaseQueries>>();
const leaseQueries = (db: Db) => {
  let q = leaseQueriesOf.get(db);
  if (!q) {
    q = makeLeaseQueries(db);
    leaseQueriesOf.set(db, q);
  }
  return q;
};

/** A lease as the API answers it; `mayRevoke` says whether the caller may renew and revoke it (D71). */
export function presentLease(row: LeaseRow, mayRevoke: boolean): Lease {
  return {
    id: row.id,
    username: row.username,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    state: row.state,
    createdBy: row.created_by_name,
    endedAt: row.ended_at,
    lastError: row.last_error,
    mayRevoke,
  };
}

/** When the credential of this request stops working: a lease never outlives the token that made it. */
async function credentialExpiry(ctx: Ctx): Promise<number | null> {
  const t = ctx.principal.token;
  if (!t) return null;
  const row = t.identity
    ? await ctx.deps.db.selectFrom('identity_tokens').select('expires_at').where('id', '=', t.id).executeTakeFirst()
    : await ctx.deps.db.selectFrom('access_tokens').select('expires_at').where('id', '=', t.id).executeTakeFirst();
  return row?.expires_at ? Date.parse(row.expires_at) : null;
}

export async function createLease(
  ctx: Ctx,
  input: { projectId: string; env: string; name: string; ttlSeconds?: number | undefined },
): Promise<CreatedLease> {
  // D71: what may pull may lease (a token's D31/D32/D62 limits apply: authentication and authorizeEnv).
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'read' });
  const { deps } = ctx;
  // Two independent reads, at once.
  const [{ row: ds, conn }, credentialEnd] = await Promise.all([
    findDynamicSecret(deps.db, env.id, input.name),
    credentialExpiry(ctx),
  ]);
  const engine = deps.engines.engine(conn.kind);
  const now = deps.clock.now().getTime();
  let maxEnd = now + ds.max_ttl_seconds * 1000;
  if (credentialEnd !== null) maxEnd = Math.min(maxEnd, credentialEnd);
  const expires = Math.min(now + (input.ttlSeconds ?? ds.default_ttl_seconds) * 1000, maxEnd);
  if (expires - now < 1000) throw validation('ttlSeconds', 'the credential of this request expires too soon to lease');
  const lease: LeaseRow = {
    id: newId(),
    project_id: access.project.id,
    environment_id: env.id,
    dynamic_secret_id: ds.id,
    connection_id: conn.id,
    username: makeUsername(env.name, ds.name, engine.maxUsernameLength),
    state: 'creating',
    revoke_statements: JSON.stringify(revokeStatements(deps, ds, conn.kind)),
    created_by: ctx.principal.userId,
    created_by_name: ctx.principal.actorName,
    token_id: ctx.principal.token?.id ?? null,
    created_at: iso(now),
    expires_at: iso(expires),
    max_expires_at: iso(maxEnd),
    next_attempt_at: iso(now + abandonedAfterMs(deps, statementsOf(ds.create_statements).length)),
    locked_until: null,
    attempts: 0,
    last_error: null,
    end_reason: null,
    ended_at: null,
  };
  // The record, written before anything the engine sends can outlive the request (the engine calls it and
  // waits, Engine.createUser): on PostgreSQL beside the first create statement, in a transaction not yet
  // committed. Once: a create run again (after "tuple concurrently updated", or with a pending password)
  // finds it written. Record and activation are each grouped with those of the leases made at the same time
  // (runtime/write-group.ts: on SQLite, one commit for all of them).
  const queries = leaseQueries(deps.db);
  let recording: Promise<void> | undefined;
  const record = () =>
    (recording ??= deps.writeGroup.run(async (trx) => {
      // The count and the insert in one transaction, the declaration's row locked on PostgreSQL (SQLite has
      // one writer): two leases at once cannot both take the last place.
      if (deps.dialect === 'postgres') {
        await trx.selectFrom('dynamic_secrets').select('id').where('id', '=', ds.id).forUpdate().execute();
      }
      const [open] = await queries.openCount(trx, ds.id);
      if (!open || Number(open.n) >= ds.max_leases) {
        throw rateLimited(
          60_000,
          `dynamic secret "${ds.name}" has ${ds.max_leases} open leases (its maxLeases); revoke one or wait for one to end`,
        );
      }
      await queries.insert(trx, ...LEASE_COLUMNS.map((c) => lease[c]));
    }));
  // The lease given: `active`, with its audit entry and event (D66: durable before the answer). PostgreSQL
  // runs it beside its COMMIT (Engine.createUser), so the two durable writes overlap; a process that dies
  // between them leaves either a `creating` row whose user the job removes, or an `active` one whose user may
  // never have been committed, which the job ends at its expiry as any other (a user found gone counts as
  // revoked). Once: a create run again finds it done.
  let activation: Promise<void> | undefined;
  let activated = false;
  const activate = () =>
    (activation ??= (async () => {
      failpoint('lease-after-create');
      await deps.writeGroup.run(async (trx) => {
        await queries.activate(trx, lease.id, lease.expires_at);
        await recordChange(trx, ctx, leaseChange('lease.create', access.project.id, env.name, ds, lease));
      });
      activated = true;
    })());
  const password = engine.newPassword?.() ?? makePassword();
  const vars: StatementVars = { username: lease.username, password, expiration: lease.expires_at };
  try {
    await withConnection(ctx, access.project, conn, (e, target) =>
      e.createUser(target, statementsOf(ds.create_statements), vars, { recorded: record, activate }),
    );
    // The engines without a COMMIT of their own did not run it.
    await activate();
  } catch (e) {
    // No record (a full maxLeases): the engine made nothing that outlived it, and that is the answer. A
    // failure before the engine asked for the record (no connection) still leaves a `failed` lease.
    await record();
    await activation?.catch(() => undefined);
    await abandonCreate(ctx, access.project, conn, lease, e, activated);
    throw e instanceof ManagedDbError ? new AppError('UPSTREAM_FAILED', e.message) : e;
  }
  const names = leaseKeyNames(ds);
  const fields: Record<string, string> = {
    username: lease.username,
    password,
    host: conn.host,
    port: String(conn.port),
    database: conn.database ?? '',
  };
  const values = Object.fromEntries(Object.entries(names).map(([field, key]) => [key, fields[field] ?? '']));
  return {
    id: lease.id,
    username: lease.username,
    expiresAt: lease.expires_at,
    maxExpiresAt: lease.max_expires_at,
    values,
  };
}

/** D71: the audit row and webhook event of a lease's step (its id and username, never a password). */
function leaseChange(
  action: 'lease.create' | 'lease.renew' | 'lease.revoke' | 'lease.expire' | 'lease.revoke_failed',
  projectId: string,
  env: string,
  ds: { name: string; keys: string },
  lease: Pick<LeaseRow, 'id' | 'username' | 'expires_at'> & { last_error?: string | null },
) {
  return {
    action,
    projectId,
    targetEnv: env,
    targetKey: ds.name,
    detail: {
      lease: lease.id,
      username: lease.username,
      ...(action === 'lease.create' || action === 'lease.renew' ? { expiresAt: lease.expires_at } : {}),
      ...(action === 'lease.revoke_failed' && lease.last_error ? { error: lease.last_error } : {}),
    },
    event: { keys: Object.values(leaseKeyNames(ds)) },
  };
}

/**
 * A create that failed: whatever its statements made is removed now (the engines already remove what they
 * made, this makes sure), and the lease ends `failed`. When that removal fails too, the lease is left to the
 * revocation job (`revoke_failed`): a user may exist, and it is not forgotten. A lease already `active` (its
 * COMMIT failed beside its activation, when the connection broke) has an audit entry of its create: it ends
 * `revoked`, with the entry of its revocation.
 */
async function abandonCreate(
  ctx: Ctx,
  project: ProjectRow,
  conn: ConnectionRow,
  lease: LeaseRow,
  cause: unknown,
  activated: boolean,
): Promise<void> {
  const reason = cause instanceof Error ? cause.message.slice(0, 500) : 'create failed';
  const end_reason = activated ? 'revoked' : 'failed';
  await ctx.deps.db
    .updateTable('leases')
    .set({ state: 'revoking', end_reason, last_error: reason, next_attempt_at: lease.created_at })
    .where('id', '=', lease.id)
    .execute();
  await revokeOne(ctx.deps, project, conn, { ...lease, state: 'revoking', end_reason }, ctx.principal);
}

async function findLease(ctx: Ctx, input: { projectId: string; env: string; name: string; leaseId: string }) {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'read' });
  const { row: ds, conn } = await findDynamicSecret(ctx.deps.db, env.id, input.name);
  const lease = await ctx.deps.db
    .selectFrom('leases')
    .selectAll()
    .where('id', '=', input.leaseId)
    .where('dynamic_secret_id', '=', ds.id)
    .executeTakeFirst();
  // A lease of another dynamic secret, environment, project or workspace is not found here (D71 details).
  if (!lease) throw notFound('lease');
  // D71 details: its creator, or anyone with write permission, may renew and revoke it.
  const mayManage = lease.created_by === ctx.principal.userId || envPermission(access, env) === 'write';
  return { access, env, ds, conn, lease, mayManage };
}

export async function listLeases(
  ctx: Ctx,
  input: { projectId: string; env: string; name: string; state?: 'open' | 'all' | undefined },
): Promise<Lease[]> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'read' });
  const { row: ds } = await findDynamicSecret(ctx.deps.db, env.id, input.name);
  const write = envPermission(access, env) === 'write';
  let q = ctx.deps.db.selectFrom('leases').selectAll().where('dynamic_secret_id', '=', ds.id);
  if (input.state !== 'all') q = q.where('state', 'in', OPEN_STATES);
  const rows = await q.orderBy('created_at', 'desc').limit(200).execute();
  return rows.map((r) => presentLease(r, write || r.created_by === ctx.principal.userId));
}

export async function renewLease(
  ctx: Ctx,
  input: { projectId: string; env: string; name: string; leaseId: string; ttlSeconds?: number | undefined },
): Promise<{ id: string; expiresAt: string; maxExpiresAt: string }> {
  const { access, env, ds, lease, mayManage } = await findLease(ctx, input);
  if (!mayManage) throw forbidden("only the lease's creator or someone with write access may renew it");
  if (lease.state !== 'active')
    throw new AppError('CONFLICT', `the lease is ${lease.state.replace('_', ' ')}`, 'leaseId');
  const now = ctx.deps.clock.now().getTime();
  // D71 details: a renewal past the cap answers 200 with expiresAt at the cap.
  const expires = Math.min(now + (input.ttlSeconds ?? ds.default_ttl_seconds) * 1000, Date.parse(lease.max_expires_at));
  const expiresAt = iso(Math.max(expires, Date.parse(lease.expires_at)));
  await ctx.deps.db.transaction().execute(async (trx) => {
    const done = await trx
      .updateTable('leases')
      .set({ expires_at: expiresAt, next_attempt_at: expiresAt })
      .where('id', '=', lease.id)
      .where('state', '=', 'active')
      .executeTakeFirst();
    if (Number(done.numUpdatedRows) === 0) throw new AppError('CONFLICT', 'the lease ended meanwhile', 'leaseId');
    await recordChange(
      trx,
      ctx,
      leaseChange('lease.renew', access.project.id, env.name, ds, { ...lease, expires_at: expiresAt }),
    );
  });
  return { id: lease.id, expiresAt, maxExpiresAt: lease.max_expires_at };
}

/** D71: DELETE answers 204 once the revoke statements ran; a refusal is 502 and leaves the job retrying. */
export async function revokeLease(
  ctx: Ctx,
  input: { projectId: string; env: string; name: string; leaseId: string },
): Promise<void> {
  const { access, conn, lease, mayManage } = await findLease(ctx, input);
  if (!mayManage) throw forbidden("only the lease's creator or someone with write access may revoke it");
  if (!(OPEN_STATES as readonly string[]).includes(lease.state)) return; // ended already: nothing to do
  const wanted = await wantRevocation(ctx.deps, [lease.id], 'revoked');
  if (wanted.length === 0) return;
  const outcome = await revokeOne(ctx.deps, access.project, conn, wanted[0]!, ctx.principal);
  if (outcome === 'locked') {
    throw new AppError('CONFLICT', 'the lease is being revoked right now; look again in a moment', 'leaseId');
  }
  if (outcome instanceof Error) await upstream(() => Promise.reject(outcome));
}

/**
 * Marks open leases as to be revoked now (`revoking`, with why: `revoked` unless they already had a reason)
 * and answers their rows as they then are. Used by DELETE, by deletions of what leases belong to, and for the
 * leases of a revoked token.
 */
async function wantRevocation(
  deps: Pick<Deps, 'db' | 'clock'>,
  ids: string[],
  reason: 'revoked' | 'expired',
): Promise<LeaseRow[]> {
  if (ids.length === 0) return [];
  await markDue(deps.db, deps, (q) => q.where('id', 'in', ids).where('state', 'in', OPEN_STATES), reason);
  return deps.db.selectFrom('leases').selectAll().where('id', 'in', ids).where('state', 'in', OPEN_STATES).execute();
}

/**
 * One revocation: claims the lease (so two instances, or a DELETE and the job, never run it together), runs
 * its revoke statements through the engine, and records the outcome. `'gone'` from the engine (the user was
 * already dropped) counts as done. Answers 'done', 'locked' (someone else holds it), or the failure.
 */
async function revokeOne(
  deps: Deps,
  project: ProjectRow,
  conn: ConnectionRow,
  lease: LeaseRow,
  actor: Principal,
): Promise<'done' | 'locked' | Error> {
  const nowMs = deps.clock.now().getTime();
  const claim = await deps.db
    .updateTable('leases')
    .set({ locked_until: iso(nowMs + REVOKE_LOCK_MS) })
    .where('id', '=', lease.id)
    .where('state', 'in', OPEN_STATES)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', iso(nowMs))]))
    .executeTakeFirst();
  if (Number(claim.numUpdatedRows) === 0) return 'locked';
  const ctx = { deps, principal: actor };
  const vars: StatementVars = { username: lease.username, password: '', expiration: lease.expires_at };
  let failure: Error | null = null;
  try {
    await withConnection(ctx, project, conn, (engine, target) =>
      engine.revokeUser(target, statementsOf(lease.revoke_statements), vars),
    );
  } catch (e) {
    if (!(e instanceof ManagedDbError)) throw e;
    failure = e;
  }
  const env = await deps.db
    .selectFrom('environments')
    .select('name')
    .where('id', '=', lease.environment_id)
    .executeTakeFirst();
  const ds = await deps.db
    .selectFrom('dynamic_secrets')
    .select(['name', 'keys'])
    .where('id', '=', lease.dynamic_secret_id)
    .executeTakeFirst();
  const envName = env?.name ?? '';
  const secret = ds ?? { name: '', keys: '{}' };
  const now = deps.clock.now().toISOString();
  if (failure === null) {
    const final = lease.end_reason ?? 'revoked';
    await deps.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('leases')
        .set({ state: final, ended_at: now, locked_until: null, next_attempt_at: null })
        .where('id', '=', lease.id)
        .execute();
      // A failed create handed nothing out: its end needs no entry of its own.
      if (final !== 'failed') {
        const action = final === 'expired' ? 'lease.expire' : 'lease.revoke';
        await recordChange(trx, ctx, leaseChange(action, project.id, envName, secret, lease));
      }
    });
    return 'done';
  }
  const attempts = lease.attempts + 1;
  const lastError = failure.message.slice(0, 500);
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('leases')
      .set({
        state: 'revoke_failed',
        attempts,
        last_error: lastError,
        next_attempt_at: iso(deps.clock.now().getTime() + revokeBackoffMs(attempts)),
        locked_until: null,
      })
      .where('id', '=', lease.id)
      .execute();
    // Loud once, when it turns: a database away for twenty minutes is one entry, not one per retry.
    if (lease.state !== 'revoke_failed') {
      await recordChange(
        trx,
        ctx,
        leaseChange('lease.revoke_failed', project.id, envName, secret, { ...lease, last_error: lastError }),
      );
    }
  });
  return failure;
}

/**
 * Revokes, now, the open leases of a dynamic secret or an environment of the project (before they are
 * deleted), or of the whole project. Answers how many could not be revoked (they stay `revoke_failed`,
 * retried by the job).
 */
export async function revokeLeasesNow(
  ctx: Ctx,
  project: ProjectRow,
  of: { dynamicSecretId?: string; environmentId?: string },
): Promise<number> {
  let q = ctx.deps.db
    .selectFrom('leases')
    .select('id')
    .where('project_id', '=', project.id)
    .where('state', 'in', OPEN_STATES);
  if (of.dynamicSecretId) q = q.where('dynamic_secret_id', '=', of.dynamicSecretId);
  if (of.environmentId) q = q.where('environment_id', '=', of.environmentId);
  const rows = await q.execute();
  const reason = 'revoked';
  let failed = 0;
  for (const lease of await wantRevocation(
    ctx.deps,
    rows.map((r) => r.id),
    reason,
  )) {
    const conn = await ctx.deps.db
      .selectFrom('connections')
      .selectAll()
      .where('id', '=', lease.connection_id)
      .executeTakeFirstOrThrow();
    const outcome = await revokeOne(ctx.deps, project, conn, lease, ctx.principal);
    if (outcome !== 'done') failed++;
  }
  return failed;
}

/**
 * D71 details: revoking or deleting a token (or an identity, whose tokens go with it) revokes the leases it
 * made. Called in the transaction that revokes the token: the leases become due at once, and the job (kicked
 * after the commit) revokes them.
 */
export async function leasesOfTokensDue(trx: Deps['db'], deps: Pick<Deps, 'clock'>, tokenIds: string[]): Promise<void> {
  if (tokenIds.length === 0) return;
  await markDue(
    trx,
    deps,
    (q) => q.where('token_id', 'in', tokenIds).where('state', 'in', ['active', 'revoking', 'revoke_failed']),
    'revoked',
  );
}

type LeaseUpdate = UpdateQueryBuilder<Database, 'leases', 'leases', UpdateResult>;

/**
 * Makes the leases `where` selects due now: `revoking` (a `revoke_failed` one keeps its state, which says its
 * last attempt failed), with why they end unless they already had a reason.
 */
async function markDue(
  db: Deps['db'],
  deps: Pick<Deps, 'clock'>,
  where: (q: LeaseUpdate) => LeaseUpdate,
  reason: 'revoked' | 'expired',
): Promise<void> {
  const now = deps.clock.now().toISOString();
  await where(db.updateTable('leases').set({ next_attempt_at: now })).execute();
  await where(db.updateTable('leases').set({ state: 'revoking' }))
    .where('state', '!=', 'revoke_failed')
    .execute();
  await where(db.updateTable('leases').set({ end_reason: reason }))
    .where('end_reason', 'is', null)
    .execute();
}

/** How many leases one run of the job takes at a time, and revokes at once. */
const BATCH = 100;
const PARALLEL = 8;
/** A run stops after this much work (the next run goes on), so a backlog never holds a shutdown long. */
const RUN_BUDGET_MS = 20_000;

/**
 * The revocation job's run (jobs/task-lease.ts keeps it to one instance at a time): every lease that is due
 * (expired, to be revoked, a failed revocation whose retry time came, a create abandoned by a dead process) is
 * revoked, BATCH at a time and PARALLEL at once, so a thousand expiring in one minute are a few short runs of
 * small transactions, and pulls meanwhile wait on none of them.
 */
export async function revokeDueLeases(deps: Deps): Promise<number> {
  const started = Date.now();
  let done = 0;
  while (Date.now() - started < RUN_BUDGET_MS) {
    const now = deps.clock.now().toISOString();
    const due = await deps.db
      .selectFrom('leases')
      .selectAll()
      .where('state', 'in', OPEN_STATES)
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .orderBy('next_attempt_at')
      .limit(BATCH)
      .execute();
    if (due.length === 0) break;
    // An active lease that is due has expired; a `creating` one was abandoned by a process that died.
    const expired = due.filter((l) => l.state === 'active').map((l) => l.id);
    const abandoned = due.filter((l) => l.state === 'creating').map((l) => l.id);
    if (expired.length > 0) await wantRevocation(deps, expired, 'expired');
    if (abandoned.length > 0) {
      await deps.db
        .updateTable('leases')
        .set({ state: 'revoking', end_reason: 'failed', last_error: 'the lease was never completed' })
        .where('id', 'in', abandoned)
        .where('state', '=', 'creating')
        .execute();
    }
    const rows = await deps.db
      .selectFrom('leases')
      .selectAll()
      .where(
        'id',
        'in',
        due.map((l) => l.id),
      )
      .where('state', 'in', OPEN_STATES)
      .execute();
    const projectIds = [...new Set(rows.map((r) => r.project_id))];
    const connectionIds = [...new Set(rows.map((r) => r.connection_id))];
    const projects = new Map(
      (projectIds.length === 0
        ? []
        : await deps.db.selectFrom('projects').selectAll().where('id', 'in', projectIds).execute()
      ).map((p) => [p.id, p]),
    );
    const connections = new Map(
      (connectionIds.length === 0
        ? []
        : await deps.db.selectFrom('connections').selectAll().where('id', 'in', connectionIds).execute()
      ).map((c) => [c.id, c]),
    );
    let next = 0;
    const worker = async () => {
      while (next < rows.length) {
        const lease = rows[next++]!;
        const project = projects.get(lease.project_id);
        const conn = connections.get(lease.connection_id);
        if (!project || !conn) continue;
        const outcome = await revokeOne(deps, project, conn, lease, systemActor(project.workspace_id));
        if (outcome === 'done') done++;
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    if (due.length < BATCH) break;
  }
  return done;
}
