import { MASK } from '@svcenv/contract';
import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { REVISIONS_CHANNEL } from '../../db/notify.js';
import { AppError, notFound } from '../../lib/errors.js';
import { containsReference } from '../../lib/references.js';
import { auditRow, recordAudit } from '../core/audit.js';
import { authorizeEnv, type EnvFull, type EnvTarget, type ProjectAccess, readNeed } from '../core/authz.js';
import type { Ctx } from '../core/context.js';
import type { Deps } from '../core/deps.js';
import type { Principal } from '../core/principal.js';
import { envSealer, type PlainVar } from '../core/values.js';
import { refuseUnresolved } from './references.js';

/**
 * D75: personal overrides (ADR 0031). A person's own value of a key in an unprotected environment they may
 * write. The shared variable, its history and the revisions are untouched (no recordChange: no revision, no
 * webhook event); the audit entry names the key, never the value (D36). Values are sealed with the project key
 * in a role of their own, bound to (project, environment, key, owner): a ciphertext moved into a variable's row
 * or to another person's override fails to open.
 *
 * Applied for their owner only (overlay): pulls (services/pull/pull.ts) and the listing of variables
 * (variables.ts), with the owner's session or a token the owner created (D32: principal.userId). Every write
 * bumps `environments.override_rev` and, on PostgreSQL, notifies the environment's channel in its transaction,
 * so the pull looks overrides up only in an environment that ever had one, and held pulls (D43) look again.
 */

/**
 * The person whose overrides a caller sees: the user, or for a token the user who created it (D32). svcenv's
 * own work and tokens issued to a workload identity (D60) belong to nobody: null.
 */
export function overrideOwner(principal: Principal): string | null {
  if (principal.system || principal.token?.identity) return null;
  return principal.userId;
}

function ownerOf(ctx: Ctx): string {
  const owner = overrideOwner(ctx.principal);
  if (owner === null) throw new AppError('FORBIDDEN', 'personal overrides belong to a person');
  return owner;
}

/** Sealed under a location of its own: the key and its owner ('/' never occurs in a key, D24). */
const sealedKey = (key: string, userId: string) => `${key}/${userId}`;

/**
 * D75: "only in unprotected environments". 403 FORBIDDEN, as any write a permission does not allow (ADR 0031):
 * the environment's protection is a permission rule (D23), not a conflict with the state of the key.
 */
function requireUnprotected(env: EnvFull): void {
  if (Number(env.protected) === 1) {
    throw new AppError('FORBIDDEN', `personal overrides are not allowed in protected environment "${env.name}"`);
  }
}

/** In the write's transaction: the environment's override counter, and D43's wake-up of held pulls. */
async function bumpOverrides(deps: Deps, trx: Db, envId: string): Promise<void> {
  await trx
    .updateTable('environments')
    .set((eb) => ({ override_rev: eb('override_rev', '+', 1) }))
    .where('id', '=', envId)
    .execute();
  if (deps.dialect === 'postgres') await sql`select pg_notify(${REVISIONS_CHANNEL}, ${envId})`.execute(trx);
}

export async function putOverride(ctx: Ctx, input: EnvTarget & { key: string; value: string }) {
  const userId = ownerOf(ctx);
  const { access, env } = await authorizeEnv(ctx, { projectId: input.projectId, env: input.env, need: 'write' });
  requireUnprotected(env);
  // D49/D67: an override's references are checked for its owner as a variable write's are (nothing written).
  if (containsReference(input.value)) {
    await refuseUnresolved(ctx, access, [{ env, set: [{ key: input.key, value: input.value }] }]);
  }
  const sealer = envSealer(ctx.deps.keyring, access, env);
  const now = ctx.deps.clock.now().toISOString();
  const sealed = sealer.seal(sealedKey(input.key, userId), input.value, 'override');
  const orphaned = await ctx.deps.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('personal_overrides')
      .values({
        environment_id: env.id,
        user_id: userId,
        key: input.key,
        value_sealed: sealed,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.columns(['environment_id', 'user_id', 'key']).doUpdateSet({ value_sealed: sealed, updated_at: now }),
      )
      .execute();
    await bumpOverrides(ctx.deps, trx, env.id);
    await recordAudit(
      trx,
      auditRow(ctx.deps.clock, ctx.principal, {
        action: 'override.set',
        projectId: input.projectId,
        targetEnv: env.name,
        targetKey: input.key,
      }),
    );
    const shared = await trx
      .selectFrom('variables')
      .select('key')
      .where('environment_id', '=', env.id)
      .where('key', '=', input.key)
      .executeTakeFirst();
    return !shared;
  });
  return { key: input.key, value: MASK, orphaned, updatedAt: now };
}

export async function listOverrides(ctx: Ctx, input: EnvTarget & { reveal: boolean }) {
  const userId = ownerOf(ctx);
  // D23/ADR 0031: revealing one's own values needs write permission, as revealing any value does.
  const { access, env } = await authorizeEnv(ctx, {
    projectId: input.projectId,
    env: input.env,
    need: readNeed(input.reveal),
  });
  const rows = await ctx.deps.db
    .selectFrom('personal_overrides as o')
    .leftJoin('variables as v', (j) =>
      j.onRef('v.environment_id', '=', 'o.environment_id').onRef('v.key', '=', 'o.key'),
    )
    .select(['o.key', 'o.value_sealed', 'o.updated_at', 'v.key as shared'])
    .where('o.environment_id', '=', env.id)
    .where('o.user_id', '=', userId)
    .orderBy('o.key')
    .execute();
  const sealer = envSealer(ctx.deps.keyring, access, env);
  return rows.map((r) => ({
    key: r.key,
    // D26: masked unless revealed.
    value: input.reveal ? sealer.open(sealedKey(r.key, userId), r.value_sealed, 'override') : MASK,
    orphaned: r.shared === null,
    updatedAt: r.updated_at,
  }));
}

export async function deleteOverride(ctx: Ctx, input: EnvTarget & { key: string }): Promise<void> {
  const userId = ownerOf(ctx);
  const { env } = await authorizeEnv(ctx, { projectId: input.projectId, env: input.env, need: 'write' });
  await ctx.deps.db.transaction().execute(async (trx) => {
    const gone = await trx
      .deleteFrom('personal_overrides')
      .where('environment_id', '=', env.id)
      .where('user_id', '=', userId)
      .where('key', '=', input.key)
      .executeTakeFirst();
    if (Number(gone.numDeletedRows) === 0) throw notFound(`override of "${input.key}"`);
    await bumpOverrides(ctx.deps, trx, env.id);
    await recordAudit(
      trx,
      auditRow(ctx.deps.clock, ctx.principal, {
        action: 'override.delete',
        projectId: input.projectId,
        targetEnv: env.name,
        targetKey: input.key,
      }),
    );
  });
}

/**
 * The caller's own overrides of `env`, opened (orphaned ones too: `overlay` leaves them out), or null when there
 * are none. No query at all in an environment that never had an override (override_rev 0), nor for a caller who
 * is nobody (overrideOwner): the pulls of everyone else cost what they did before D75.
 */
export async function ownOverrides(ctx: Ctx, access: ProjectAccess, env: EnvFull): Promise<Map<string, string> | null> {
  // An environment protected after an override was set applies none (D75: overrides are for unprotected ones).
  if (!Number(env.override_rev) || Number(env.protected) === 1) return null;
  const userId = overrideOwner(ctx.principal);
  if (userId === null) return null;
  const rows = await ctx.deps.db
    .selectFrom('personal_overrides')
    .select(['key', 'value_sealed'])
    .where('environment_id', '=', env.id)
    .where('user_id', '=', userId)
    .execute();
  if (rows.length === 0) return null;
  const sealer = envSealer(ctx.deps.keyring, access, env);
  return new Map(rows.map((r) => [r.key, sealer.open(sealedKey(r.key, userId), r.value_sealed, 'override')]));
}

/**
 * The environment's variables as their owner sees them: each overridden key with the person's value (type,
 * dates and expiry stay the shared variable's); an override of a key the environment lacks is never applied.
 * `applied` names the keys overridden; null when none applies.
 */
export function overlay(
  vars: ReadonlyMap<string, PlainVar>,
  mine: ReadonlyMap<string, string> | null,
): { vars: Map<string, PlainVar>; applied: Set<string> } | null {
  if (!mine) return null;
  const applied = new Set<string>();
  const out = new Map<string, PlainVar>();
  for (const [k, v] of vars) {
    const value = mine.get(k);
    if (value === undefined) out.set(k, v);
    else {
      out.set(k, { ...v, value });
      applied.add(k);
    }
  }
  return applied.size > 0 ? { vars: out, applied } : null;
}
