import { MASK } from '@svcenv/contract';
import { AppError, notFound } from '../../lib/errors.js';
import { containsReference } from '../../lib/references.js';
import { auditRow, recordAudit } from '../core/audit.js';
import { authorizeEnv, type EnvFull, type EnvTarget } from '../core/authz.js';
import type { Ctx } from '../core/context.js';
import { envSealer } from '../core/values.js';
import { refuseUnresolved } from './references.js';

/**
 * D75: personal overrides. A person's own value of a key in an unprotected environment they may write. The
 * shared variable, its history and the revisions are untouched (no recordChange: no revision, no webhook
 * event); the audit entry names the key, never the value (D36). Values are sealed with the project key as a
 * variable's current value, bound to (project, environment, key).
 */

/** Whose overrides: the person, or for a token the person who created it (D32). Identities have none. */
function ownerOf(ctx: Ctx): string {
  if (ctx.principal.system) throw new AppError('FORBIDDEN', 'personal overrides belong to a person');
  return ctx.principal.userId;
}

/**
 * D75: "only in unprotected environments". 403 FORBIDDEN, as any write a permission does not allow (ADR 0031):
 * the environment's protection is a permission rule (D23), not a conflict with the state of the key.
 */
function requireUnprotected(env: EnvFull): void {
  if (env.protected) {
    throw new AppError('FORBIDDEN', `personal overrides are not allowed in protected environment "${env.name}"`);
  }
}

export async function putOverride(ctx: Ctx, input: EnvTarget & { key: string; value: string }) {
  const userId = ownerOf(ctx);
  const { access, env } = await authorizeEnv(ctx, { projectId: input.projectId, env: input.env, need: 'write' });
  requireUnprotected(env);
  // D49: an override's references are checked for its owner as a variable write's are (nothing written).
  if (containsReference(input.value)) {
    await refuseUnresolved(ctx, access, [{ env, set: [{ key: input.key, value: input.value }] }]);
  }
  const sealer = envSealer(ctx.deps.keyring, access, env);
  const now = ctx.deps.clock.now().toISOString();
  const sealed = sealer.seal(input.key, input.value, 'current');
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
  const { access, env } = await authorizeEnv(ctx, {
    projectId: input.projectId,
    env: input.env,
    need: input.reveal ? 'write' : 'read',
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
    // D26: masked unless revealed (reveal needs write, as the variables listing's).
    value: input.reveal ? sealer.open(r.key, r.value_sealed, 'current') : MASK,
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
