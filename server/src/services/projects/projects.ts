import type { Environment, Project } from '@svcenv/contract';
import type { Db } from '../../db/index.js';
import { AppError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { type AuditFilters, auditPage } from '../core/audit.js';
import {
  authorizeEnv,
  authorizeProject,
  creatorAccess,
  describeAccess,
  type EnvFull,
  type EnvRow,
  loadProjectAccesses,
  type ProjectAccess,
  type ProjectRow,
  requireOwner,
  requireProjectAdmin,
  tokenAllowsEnv,
} from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import { revokeLeasesNow } from '../credentials/leases.js';
import { checkLimit } from '../workspace/instance-policy.js';

export const DEFAULT_PROJECT_COLOR = '#6366f1';
export const DEFAULT_ENVS = ['dev', 'staging', 'prod'];

/** Spec: prod red, staging yellow, dev green; other names a neutral slate. */
export function defaultEnvColor(name: string): string {
  if (name === 'prod' || name === 'production') return '#ef4444';
  if (name === 'staging' || name === 'stage') return '#eab308';
  if (name === 'dev' || name === 'development') return '#22c55e';
  return '#64748b';
}
/** Spec: `protected` is true by default for `prod` and `production` only. */
export const defaultProtected = (name: string) => name === 'prod' || name === 'production';

export async function projectEnvs(db: Db, projectId: string): Promise<EnvFull[]> {
  return db
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
    .where('project_id', '=', projectId)
    .orderBy('position')
    .execute();
}

/** A project as the caller sees it: `envs` are all of its environments, `access` is the caller's (D57). */
export function presentProject(p: ProjectRow, envs: readonly EnvRow[], access: ProjectAccess): Project {
  return {
    id: p.id,
    name: p.name,
    slug: p.slug,
    ...(p.description !== null ? { desc: p.description } : {}),
    color: p.color,
    envs: envs.map((e) => e.name),
    access: describeAccess(access, envs),
  };
}

export const presentEnv = (e: EnvFull): Environment => ({
  name: e.name,
  protected: e.protected === 1,
  color: e.color,
  requireApproval: Number(e.require_approval) === 1,
});

/** Projects the principal can see (a Member: only projects they were added to; a token: its project). */
export async function listProjects(ctx: Ctx): Promise<Project[]> {
  const { deps, principal } = ctx;
  let q = deps.db.selectFrom('projects as p').selectAll('p').where('p.workspace_id', '=', principal.workspaceId);
  if (principal.wsRole !== 'Owner') {
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom('project_members as pm')
          .select('pm.project_id')
          .whereRef('pm.project_id', '=', 'p.id')
          .where('pm.user_id', '=', principal.userId),
      ),
    );
  }
  if (principal.token?.projectId) q = q.where('p.id', '=', principal.token.projectId);
  const projects = await q.orderBy('p.created_at').orderBy('p.name').execute();
  if (projects.length === 0) return [];
  const ids = projects.map((p) => p.id);
  // A fixed number of queries whatever the number of projects: environments and access of all at once.
  const [envs, accesses] = await Promise.all([
    deps.db
      .selectFrom('environments')
      .select(['id', 'project_id', 'name', 'protected'])
      .where('project_id', 'in', ids)
      .orderBy('position')
      .execute(),
    loadProjectAccesses(deps.db, principal, projects, deps.clock.now()),
  ]);
  return projects.flatMap((p) => {
    const access = accesses.get(p.id);
    return access
      ? [
          presentProject(
            p,
            envs.filter((e) => e.project_id === p.id),
            access,
          ),
        ]
      : [];
  });
}

/** D48: the D28 rule (lower case, runs outside [a-z0-9] one `-`, trimmed), at most 63 characters. */
export function slugOf(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 63)
      .replace(/-+$/, '') || 'project'
  );
}

async function slugTaken(db: Db, workspaceId: string, slug: string): Promise<boolean> {
  const row = await db
    .selectFrom('projects')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('slug', '=', slug)
    .executeTakeFirst();
  return row !== undefined;
}

/** `base`, or `base-2`, `base-3`, ... : the first free slug of the workspace (D48). */
async function freeSlug(db: Db, workspaceId: string, base: string): Promise<string> {
  let slug = base;
  for (let n = 2; await slugTaken(db, workspaceId, slug); n++) {
    slug = `${base.slice(0, 63 - String(n).length - 1).replace(/-+$/, '')}-${n}`;
  }
  return slug;
}

async function nameTaken(db: Db, workspaceId: string, name: string, exceptId?: string): Promise<boolean> {
  let q = db.selectFrom('projects').select('id').where('workspace_id', '=', workspaceId).where('name', '=', name);
  if (exceptId) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

async function workspacePlan(db: Db, workspaceId: string): Promise<string> {
  const ws = await db.selectFrom('workspaces').select('plan').where('id', '=', workspaceId).executeTakeFirstOrThrow();
  return ws.plan;
}

export async function createProject(
  ctx: Ctx,
  input: { name: string; desc?: string | undefined; color?: string | undefined; envs?: string[] | undefined },
): Promise<Project> {
  const { deps, principal } = ctx;
  if (principal.token && (principal.token.scope !== 'write' || principal.token.projectId)) {
    throw new AppError('FORBIDDEN', 'creating a project needs a workspace-wide write token');
  }
  const envNames = input.envs ?? DEFAULT_ENVS;
  if (new Set(envNames).size !== envNames.length) throw new AppError('CONFLICT', 'duplicate environment name', 'envs');
  const id = newId();
  const now = deps.clock.now().toISOString();
  const wrapped = deps.keyring.newWrappedKey(id);
  return deps.db.transaction().execute(async (trx) => {
    const plan = await workspacePlan(trx, principal.workspaceId);
    const count = await trx
      .selectFrom('projects')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', principal.workspaceId)
      .executeTakeFirstOrThrow();
    await checkLimit(trx, principal, plan, 'projects', Number(count.n) + 1);
    await checkLimit(trx, principal, plan, 'envsPerProject', envNames.length);
    if (await nameTaken(trx, principal.workspaceId, input.name)) {
      throw new AppError('CONFLICT', 'a project with this name already exists', 'name');
    }
    const row: ProjectRow = {
      id,
      workspace_id: principal.workspaceId,
      name: input.name,
      slug: await freeSlug(trx, principal.workspaceId, slugOf(input.name)),
      description: input.desc ?? null,
      color: input.color ?? DEFAULT_PROJECT_COLOR,
      wrapped_key: wrapped,
      created_at: now,
      updated_at: now,
    };
    await trx.insertInto('projects').values(row).execute();
    const envRows = envNames.map((name, position) => ({
      id: newId(),
      project_id: id,
      name,
      protected: defaultProtected(name) ? 1 : 0,
      color: defaultEnvColor(name),
      position,
      created_at: now,
    }));
    if (envRows.length > 0) await trx.insertInto('environments').values(envRows).execute();
    // D20: the creator becomes the project's Admin (an Owner bypasses roles, but keeps the record).
    await trx
      .insertInto('project_members')
      .values({ project_id: id, user_id: principal.userId, role: 'Admin' })
      .execute();
    await recordChange(trx, ctx, { action: 'project.create', projectId: id, detail: { name: input.name } });
    return presentProject(row, envRows, creatorAccess(principal, row));
  });
}

export async function getProject(ctx: Ctx, input: { projectId: string }): Promise<Project> {
  const access = await authorizeProject(ctx, input.projectId);
  return presentProject(access.project, await projectEnvs(ctx.deps.db, input.projectId), access);
}

export async function updateProject(
  ctx: Ctx,
  input: {
    projectId: string;
    name?: string | undefined;
    slug?: string | undefined;
    desc?: string | undefined;
    color?: string | undefined;
  },
): Promise<Project> {
  const { deps, principal } = ctx;
  const { projectId } = input;
  const access = await authorizeProject(ctx, projectId, 'admin');
  return deps.db.transaction().execute(async (trx) => {
    if (input.name !== undefined && (await nameTaken(trx, principal.workspaceId, input.name, projectId))) {
      throw new AppError('CONFLICT', 'a project with this name already exists', 'name');
    }
    if (
      input.slug !== undefined &&
      input.slug !== access.project.slug &&
      (await slugTaken(trx, principal.workspaceId, input.slug))
    ) {
      throw new AppError('CONFLICT', 'another project of this workspace has this slug', 'slug');
    }
    const changes = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.slug !== undefined ? { slug: input.slug } : {}),
      ...(input.desc !== undefined ? { description: input.desc } : {}),
      ...(input.color !== undefined ? { color: input.color } : {}),
    };
    const updated = { ...access.project, ...changes, updated_at: deps.clock.now().toISOString() };
    await trx
      .updateTable('projects')
      .set({ ...changes, updated_at: updated.updated_at })
      .where('id', '=', projectId)
      .execute();
    await recordChange(trx, ctx, { action: 'project.update', projectId, detail: { fields: Object.keys(changes) } });
    return presentProject(updated, await projectEnvs(trx, projectId), { ...access, project: updated });
  });
}

/** Owner only. Variables, history, audit entries and memberships go with it (cascade). */
export async function deleteProject(ctx: Ctx, input: { projectId: string }): Promise<void> {
  const { deps } = ctx;
  const { projectId } = input;
  const access = await authorizeProject(ctx, projectId, 'owner');
  await revokeLeasesFirst(ctx, access.project, {}, `project "${access.project.name}"`);
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('projects').where('id', '=', projectId).execute();
    // Recorded at workspace level, since the project's own log is deleted with it.
    await recordChange(trx, ctx, { action: 'project.delete', detail: { projectId, name: access.project.name } });
  });
  deps.keyring.forget(projectId);
}

export async function listEnvs(ctx: Ctx, input: { projectId: string }): Promise<Environment[]> {
  await authorizeProject(ctx, input.projectId);
  const envs = await projectEnvs(ctx.deps.db, input.projectId);
  return envs.filter((e) => tokenAllowsEnv(ctx.principal, e.name)).map(presentEnv);
}

export async function createEnv(ctx: Ctx, input: { projectId: string; name: string }): Promise<Project> {
  const { deps, principal } = ctx;
  const { projectId, name } = input;
  const access = await authorizeProject(ctx, projectId, 'admin');
  return deps.db.transaction().execute(async (trx) => {
    const envs = await projectEnvs(trx, projectId);
    if (envs.some((e) => e.name === name)) throw new AppError('CONFLICT', 'this environment already exists', 'name');
    await checkLimit(
      trx,
      principal,
      await workspacePlan(trx, principal.workspaceId),
      'envsPerProject',
      envs.length + 1,
    );
    const position = envs.reduce((m, e) => Math.max(m, e.position + 1), 0);
    const created = {
      id: newId(),
      project_id: projectId,
      name,
      protected: defaultProtected(name) ? 1 : 0,
      color: defaultEnvColor(name),
      position,
      created_at: deps.clock.now().toISOString(),
    };
    await trx.insertInto('environments').values(created).execute();
    await recordChange(trx, ctx, { action: 'env.create', projectId, targetEnv: name });
    return presentProject(access.project, [...envs, created], access);
  });
}

/** D21: `protected` is Owner-only; `color` needs project Admin (or Owner). D47: `requireApproval` is Owner-only. */
export async function updateEnv(
  ctx: Ctx,
  req: {
    projectId: string;
    env: string;
    protected?: boolean | undefined;
    color?: string | undefined;
    requireApproval?: boolean | undefined;
  },
): Promise<Environment> {
  const { projectId, env: name, ...input } = req;
  const { access, env } = await authorizeEnv(ctx, { projectId, env: name, need: 'visible' });
  if (input.protected !== undefined || input.requireApproval !== undefined) requireOwner(ctx.principal);
  if (input.color !== undefined) requireProjectAdmin(access);
  const changes = {
    ...(input.protected !== undefined ? { protected: input.protected ? 1 : 0 } : {}),
    ...(input.color !== undefined ? { color: input.color } : {}),
    ...(input.requireApproval !== undefined ? { require_approval: input.requireApproval ? 1 : 0 } : {}),
  };
  await ctx.deps.db.transaction().execute(async (trx) => {
    if (Object.keys(changes).length > 0) {
      await trx.updateTable('environments').set(changes).where('id', '=', env.id).execute();
    }
    await recordChange(trx, ctx, { action: 'env.update', projectId, targetEnv: name, detail: input });
  });
  return presentEnv({ ...env, ...changes });
}

export async function deleteEnv(ctx: Ctx, input: { projectId: string; env: string }): Promise<void> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'admin' });
  await revokeLeasesFirst(ctx, access.project, { environmentId: env.id }, `environment "${env.name}"`);
  await ctx.deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('environments').where('id', '=', env.id).execute();
    await recordChange(trx, ctx, { action: 'env.delete', projectId: input.projectId, targetEnv: env.name });
  });
}

/**
 * D71: the database users of a project's or an environment's open leases are removed before their rows go
 * with it, so deleting never orphans a user; while a database refuses, nothing is deleted (502).
 */
async function revokeLeasesFirst(
  ctx: Ctx,
  project: ProjectRow,
  of: { environmentId?: string },
  what: string,
): Promise<void> {
  const failed = await revokeLeasesNow(ctx, project, of);
  if (failed > 0) {
    throw new AppError(
      'UPSTREAM_FAILED',
      `${failed} lease(s) of ${what} could not be revoked (their database refused or is away); ${what} is kept until they are, and they are retried`,
    );
  }
}

/** Project audit: visible to project Admins and Owners (it reveals who touched what). */
export async function projectAudit(
  ctx: Ctx,
  input: AuditFilters & { projectId: string; limit: number; cursor?: string | undefined },
) {
  const access = await authorizeProject(ctx, input.projectId);
  if (access.role !== null && access.role !== 'Admin') {
    throw new AppError('FORBIDDEN', 'project Admin role is required to read the audit log');
  }
  const { projectId, limit, cursor, ...filters } = input;
  return auditPage(ctx.deps, { workspaceId: ctx.principal.workspaceId, projectId }, filters, limit, cursor);
}
