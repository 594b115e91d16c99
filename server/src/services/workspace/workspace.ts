import type { Workspace } from '@svcenv/contract';
import type { Db } from '../../db/index.js';
import { notFound } from '../../lib/errors.js';
import { planLimits } from '../../lib/plans.js';
import { type AuditFilters, auditPage } from '../core/audit.js';
import { requireOwner, requireUser } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import { seatsInUse } from './team.js';

async function workspaceRow(db: Db, id: string) {
  const ws = await db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
  if (!ws) throw notFound('workspace');
  return ws;
}

const present = (w: { id: string; name: string; slug: string }): Workspace => ({
  id: w.id,
  name: w.name,
  slug: w.slug,
});

export async function getWorkspace(ctx: Ctx): Promise<Workspace> {
  const { deps, principal } = ctx;
  requireUser(principal);
  return present(await workspaceRow(deps.db, principal.workspaceId));
}

/** D16: Owner only; 200 Workspace. */
export async function renameWorkspace(ctx: Ctx, input: { name: string }): Promise<Workspace> {
  const { deps, principal } = ctx;
  const { name } = input;
  requireUser(principal);
  requireOwner(principal);
  return deps.db.transaction().execute(async (trx) => {
    const ws = await workspaceRow(trx, principal.workspaceId);
    await trx.updateTable('workspaces').set({ name }).where('id', '=', ws.id).execute();
    await recordChange(trx, ctx, { action: 'workspace.update', detail: { name } });
    return present({ ...ws, name });
  });
}

const count = (n: { n: number | string | bigint } | undefined) => Number(n?.n ?? 0);

export async function billing(ctx: Ctx) {
  const { deps, principal } = ctx;
  requireUser(principal);
  const ws = await workspaceRow(deps.db, principal.workspaceId);
  const projects = await deps.db
    .selectFrom('projects')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', ws.id)
    .executeTakeFirst();
  return {
    plan: ws.plan,
    limits: { ...planLimits(ws.plan) },
    usage: { projects: count(projects), members: await seatsInUse(deps.db, ws.id, deps.clock.now()) },
  };
}

/** D18: connected when an operator pulled within the last 10 minutes. */
export async function connections(ctx: Ctx) {
  const { deps, principal } = ctx;
  requireUser(principal);
  const ws = await workspaceRow(deps.db, principal.workspaceId);
  const last = ws.operator_last_sync;
  const connected = last !== null && deps.clock.now().getTime() - Date.parse(last) <= 10 * 60_000;
  return { operator: { connected, lastSync: last } };
}

/** D19: tokenCount counts tokens neither revoked nor expired. */
export async function stats(ctx: Ctx) {
  const { deps, principal } = ctx;
  requireUser(principal);
  const id = principal.workspaceId;
  const now = deps.clock.now().toISOString();
  const [members, projects, variables, tokens] = await Promise.all([
    deps.db
      .selectFrom('workspace_members')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', id)
      .executeTakeFirst(),
    deps.db
      .selectFrom('projects')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', id)
      .executeTakeFirst(),
    deps.db
      .selectFrom('variables as v')
      .innerJoin('environments as e', 'e.id', 'v.environment_id')
      .innerJoin('projects as p', 'p.id', 'e.project_id')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('p.workspace_id', '=', id)
      .executeTakeFirst(),
    deps.db
      .selectFrom('access_tokens')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', id)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirst(),
  ]);
  return {
    memberCount: count(members),
    projectCount: count(projects),
    variableCount: count(variables),
    tokenCount: count(tokens),
  };
}

/** Workspace audit spans every project, so it is for Owners (a Member would see projects they cannot). */
export async function workspaceAudit(ctx: Ctx, input: AuditFilters & { limit: number; cursor?: string | undefined }) {
  const { deps, principal } = ctx;
  const { limit, cursor, ...filters } = input;
  requireUser(principal);
  requireOwner(principal);
  return auditPage(deps, { workspaceId: principal.workspaceId }, filters, limit, cursor);
}
