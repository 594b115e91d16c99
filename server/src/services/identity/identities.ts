import type { Identity } from '@svcenv/contract';
import type { Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { WorkloadIdentitiesTable } from '../../db/schema.js';
import { AppError, isUniqueViolation, notFound, validation } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkTargetUrl } from '../../lib/net-guard.js';
import { authorizeProject, requireOwner, requireUser } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import type { Deps } from '../core/deps.js';
import { leasesOfTokensDue } from '../credentials/leases.js';
import { projectIdOf } from '../projects/project-ref.js';

/**
 * D60: workload identities, managed by the workspace's Owners through a dashboard session (D10). Any change
 * to an identity, and its deletion, deletes the tokens issued to it, so they are refused at once everywhere
 * (services/identity/authn.ts finds no row). A deleted identity keeps its row, marked, so the audit log still
 * names the actor of what its tokens did.
 */
type IdentityRow = Selectable<WorkloadIdentitiesTable>;

export function presentIdentity(row: IdentityRow): Identity {
  return {
    id: row.id,
    name: row.name,
    issuer: row.issuer,
    audience: row.audience,
    subject: row.subject,
    claims: JSON.parse(row.claims) as Record<string, string>,
    scope: row.scope,
    projectId: row.project_id,
    envs: JSON.parse(row.envs) as string[],
    ttlSeconds: row.ttl_seconds,
    trustedCidrs: JSON.parse(row.trusted_cidrs) as string[],
    createdAt: row.created_at,
    lastLoginAt: row.last_login_at,
  };
}

function requireIdentityAdmin(ctx: Ctx): void {
  requireUser(ctx.principal);
  requireOwner(ctx.principal);
}

/**
 * D60 + D5: an absolute https URL (http and private addresses only with WEBHOOK_ALLOW_PRIVATE). It is kept as
 * written, since the JWT's `iss` must equal it to the character; a query or fragment has no place in an
 * issuer (OpenID Connect Discovery 1.0, section 2).
 */
async function checkIssuer(deps: Pick<Deps, 'webhooks'>, raw: string): Promise<string> {
  const url = await checkTargetUrl(raw, 'issuer', deps.webhooks);
  if (url.search || url.hash || raw.includes('#') || raw.includes('?')) {
    throw validation('issuer', 'issuer must not contain a query or a fragment');
  }
  return raw;
}

/** D31: `*` stands for every environment and only alone. */
function checkEnvs(envs: string[]): string {
  if (envs.includes('*') && envs.length > 1) {
    throw new AppError('VALIDATION', '"*" means every environment and cannot be combined with names', 'envs');
  }
  return JSON.stringify([...new Set(envs)]);
}

/**
 * A project of the caller's workspace by id or slug (D58); one that does not exist is the field's error
 * (D60: a bad field is 400 naming it), as for a webhook's project.
 */
async function checkProject(ctx: Ctx, ref: string | null | undefined): Promise<string | null> {
  if (ref === null || ref === undefined) return null;
  const id = await projectIdOf(ctx, ref).catch(() => null);
  if (id) {
    try {
      await authorizeProject(ctx, id);
      return id;
    } catch (e) {
      if (!(e instanceof AppError && e.code === 'NOT_FOUND')) throw e;
    }
  }
  throw validation('projectId', 'projectId names no project of this workspace');
}

const cidrsJson = (list: string[]) => JSON.stringify([...new Set(list)]);

const nameTaken = () => new AppError('CONFLICT', 'an identity with this name already exists', 'name');

async function nameInUse(db: Db, workspaceId: string, name: string, except?: string): Promise<boolean> {
  let q = db
    .selectFrom('workload_identities')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('name', '=', name)
    .where('deleted_at', 'is', null);
  if (except) q = q.where('id', '!=', except);
  return (await q.executeTakeFirst()) !== undefined;
}

/** What the audit entries say of an identity: its settings, which hold no secret. */
const auditDetail = (i: Identity) => ({
  identityId: i.id,
  name: i.name,
  issuer: i.issuer,
  audience: i.audience,
  subject: i.subject,
  claims: i.claims,
  scope: i.scope,
  envs: i.envs,
  ttlSeconds: i.ttlSeconds,
  trustedCidrs: i.trustedCidrs,
});

async function liveIdentity(ctx: Ctx, id: string): Promise<IdentityRow> {
  const row = await ctx.deps.db
    .selectFrom('workload_identities')
    .selectAll()
    .where('id', '=', id)
    .where('workspace_id', '=', ctx.principal.workspaceId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw notFound('identity');
  return row;
}

export async function listIdentities(ctx: Ctx): Promise<Identity[]> {
  requireIdentityAdmin(ctx);
  const rows = await ctx.deps.db
    .selectFrom('workload_identities')
    .selectAll()
    .where('workspace_id', '=', ctx.principal.workspaceId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(presentIdentity);
}

export async function getIdentity(ctx: Ctx, input: { id: string }): Promise<Identity> {
  requireIdentityAdmin(ctx);
  return presentIdentity(await liveIdentity(ctx, input.id));
}

export interface IdentityInput {
  name: string;
  issuer: string;
  audience: string;
  subject?: string | null | undefined;
  claims?: Record<string, string> | undefined;
  scope: 'read' | 'write';
  projectId?: string | null | undefined;
  envs: string[];
  ttlSeconds: number;
  trustedCidrs?: string[] | undefined;
}

export async function createIdentity(ctx: Ctx, input: IdentityInput): Promise<Identity> {
  const { deps, principal } = ctx;
  requireIdentityAdmin(ctx);
  const issuer = await checkIssuer(deps, input.issuer);
  const envs = checkEnvs(input.envs);
  const projectId = await checkProject(ctx, input.projectId);
  const now = deps.clock.now().toISOString();
  const row: IdentityRow = {
    id: newId(),
    workspace_id: principal.workspaceId,
    name: input.name,
    issuer,
    audience: input.audience,
    subject: input.subject ?? null,
    claims: JSON.stringify(input.claims ?? {}),
    scope: input.scope,
    project_id: projectId,
    envs,
    ttl_seconds: input.ttlSeconds,
    trusted_cidrs: cidrsJson(input.trustedCidrs ?? []),
    created_by: principal.userId,
    created_at: now,
    updated_at: now,
    last_login_at: null,
    deleted_at: null,
  };
  const identity = presentIdentity(row);
  try {
    await deps.db.transaction().execute(async (trx) => {
      if (await nameInUse(trx, principal.workspaceId, row.name)) throw nameTaken();
      await trx.insertInto('workload_identities').values(row).execute();
      await recordChange(trx, ctx, { action: 'identity.create', projectId, detail: auditDetail(identity) });
    });
  } catch (e) {
    // Two creations with one name at once: the unique index refuses the second.
    throw isUniqueViolation(e) ? nameTaken() : e;
  }
  return identity;
}

export async function updateIdentity(
  ctx: Ctx,
  req: { id: string } & Partial<{ [K in keyof IdentityInput]: IdentityInput[K] | undefined }>,
): Promise<Identity> {
  const { deps, principal } = ctx;
  requireIdentityAdmin(ctx);
  const { id, ...input } = req;
  const old = await liveIdentity(ctx, id);
  const set: Partial<IdentityRow> = {};
  if (input.name !== undefined) set.name = input.name;
  if (input.issuer !== undefined) set.issuer = await checkIssuer(deps, input.issuer);
  if (input.audience !== undefined) set.audience = input.audience;
  if (input.subject !== undefined) set.subject = input.subject;
  if (input.claims !== undefined) set.claims = JSON.stringify(input.claims);
  if (input.scope !== undefined) set.scope = input.scope;
  if (input.projectId !== undefined) set.project_id = await checkProject(ctx, input.projectId);
  if (input.envs !== undefined) set.envs = checkEnvs(input.envs);
  if (input.ttlSeconds !== undefined) set.ttl_seconds = input.ttlSeconds;
  if (input.trustedCidrs !== undefined) set.trusted_cidrs = cidrsJson(input.trustedCidrs);
  const fields = Object.keys(set);
  if (fields.length === 0) return presentIdentity(old);
  const next = presentIdentity({ ...old, ...set, updated_at: deps.clock.now().toISOString() });
  try {
    await deps.db.transaction().execute(async (trx) => {
      if (set.name !== undefined && (await nameInUse(trx, principal.workspaceId, set.name, id))) throw nameTaken();
      const res = await trx
        .updateTable('workload_identities')
        .set({ ...set, updated_at: deps.clock.now().toISOString() })
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw notFound('identity');
      // D60: the tokens it issued were granted under the old settings; they end now, on every instance.
      // D71 details: the leases its tokens made end with them.
      await endIdentityTokens(trx, deps, id);
      await recordChange(trx, ctx, {
        action: 'identity.update',
        projectId: next.projectId,
        detail: { ...auditDetail(next), fields },
      });
    });
  } catch (e) {
    throw isUniqueViolation(e) ? nameTaken() : e;
  }
  return next;
}

export async function deleteIdentity(ctx: Ctx, input: { id: string }): Promise<void> {
  const { deps } = ctx;
  requireIdentityAdmin(ctx);
  const row = await liveIdentity(ctx, input.id);
  await deps.db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('workload_identities')
      .set({ deleted_at: deps.clock.now().toISOString() })
      .where('id', '=', row.id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) throw notFound('identity');
    // D71 details: the leases its tokens made end with them.
    await endIdentityTokens(trx, deps, row.id);
    await recordChange(trx, ctx, {
      action: 'identity.delete',
      projectId: row.project_id,
      detail: { identityId: row.id, name: row.name },
    });
  });
}

/** Deletes the tokens an identity issued (refused at once everywhere), and makes their leases due (D71). */
async function endIdentityTokens(trx: Db, deps: Pick<Deps, 'clock'>, identityId: string): Promise<void> {
  const tokens = await trx.selectFrom('identity_tokens').select('id').where('identity_id', '=', identityId).execute();
  await leasesOfTokensDue(
    trx,
    deps,
    tokens.map((t) => t.id),
  );
  await trx.deleteFrom('identity_tokens').where('identity_id', '=', identityId).execute();
}
