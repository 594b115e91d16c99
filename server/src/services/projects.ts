import type { Environment, Project } from '@svcenv/contract';
import type { Db } from '../db/index.js';
import { AppError, notFound } from '../lib/errors.js';
import { newId } from '../lib/ids.js';
import { checkLimit } from '../lib/plans.js';
import { auditRow, recordAudit } from './audit.js';
import {
  type EnvRow,
  envByName,
  loadProjectAccess,
  type ProjectAccess,
  type ProjectRow,
  requireEnv,
  requireOwner,
  requireProjectAdmin,
  tokenAllowsEnv,
} from './authz.js';
import type { Deps } from './deps.js';
import type { Principal } from './principal.js';
import { decryptEnvValues } from './variables.js';

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

export interface EnvFull extends EnvRow {
  project_id: string;
  color: string;
  position: number;
  revision: number;
}

export async function projectEnvs(db: Db, projectId: string): Promise<EnvFull[]> {
  return db
    .selectFrom('environments')
    .select(['id', 'project_id', 'name', 'protected', 'color', 'position', 'revision'])
    .where('project_id', '=', projectId)
    .orderBy('position')
    .execute();
}

export async function findEnv(db: Db, projectId: string, name: string, at?: number): Promise<EnvFull> {
  const env = await envByName(db, projectId, name, at);
  if (!env) throw notFound(`environment "${name}"`);
  return env;
}

export function presentProject(p: ProjectRow, envs: { name: string }[]): Project {
  return {
    id: p.id,
    name: p.name,
    ...(p.description !== null ? { desc: p.description } : {}),
    color: p.color,
    envs: envs.map((e) => e.name),
  };
}

export const presentEnv = (e: EnvFull): Environment => ({ name: e.name, protected: e.protected === 1, color: e.color });

/** Projects the principal can see (a Member: only projects they were added to; a token: its project). */
export async function listProjects(deps: Deps, principal: Principal): Promise<Project[]> {
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
  const envs = await deps.db
    .selectFrom('environments')
    .select(['project_id', 'name'])
    .where(
      'project_id',
      'in',
      projects.map((p) => p.id),
    )
    .orderBy('position')
    .execute();
  return projects.map((p) =>
    presentProject(
      p,
      envs.filter((e) => e.project_id === p.id),
    ),
  );
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
  deps: Deps,
  principal: Principal,
  input: { name: string; desc?: string | undefined; color?: string | undefined; envs?: string[] | undefined },
): Promise<Project> {
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
    checkLimit(plan, 'projects', Number(count.n) + 1);
    checkLimit(plan, 'envsPerProject', envNames.length);
    if (await nameTaken(trx, principal.workspaceId, input.name)) {
      throw new AppError('CONFLICT', 'a project with this name already exists', 'name');
    }
    const row: ProjectRow = {
      id,
      workspace_id: principal.workspaceId,
      name: input.name,
      description: input.desc ?? null,
      color: input.color ?? DEFAULT_PROJECT_COLOR,
      wrapped_key: wrapped,
      created_at: now,
      updated_at: now,
    };
    await trx.insertInto('projects').values(row).execute();
    if (envNames.length > 0) {
      await trx
        .insertInto('environments')
        .values(
          envNames.map((name, position) => ({
            id: newId(),
            project_id: id,
            name,
            protected: defaultProtected(name) ? 1 : 0,
            color: defaultEnvColor(name),
            position,
            created_at: now,
          })),
        )
        .execute();
    }
    // D20: the creator becomes the project's Admin (an Owner bypasses roles, but keeps the record).
    await trx
      .insertInto('project_members')
      .values({ project_id: id, user_id: principal.userId, role: 'Admin' })
      .execute();
    await recordAudit(
      trx,
      auditRow(deps.clock, principal, { action: 'project.create', projectId: id, detail: { name: input.name } }),
    );
    return presentProject(
      row,
      envNames.map((name) => ({ name })),
    );
  });
}

export async function getProject(deps: Deps, principal: Principal, projectId: string): Promise<Project> {
  const access = await loadProjectAccess(deps.db, principal, projectId);
  return presentProject(access.project, await projectEnvs(deps.db, projectId));
}

export async function updateProject(
  deps: Deps,
  principal: Principal,
  projectId: string,
  input: { name?: string | undefined; desc?: string | undefined; color?: string | undefined },
): Promise<Project> {
  const access = await loadProjectAccess(deps.db, principal, projectId);
  requireProjectAdmin(access);
  return deps.db.transaction().execute(async (trx) => {
    if (input.name !== undefined && (await nameTaken(trx, principal.workspaceId, input.name, projectId))) {
      throw new AppError('CONFLICT', 'a project with this name already exists', 'name');
    }
    const changes = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.desc !== undefined ? { description: input.desc } : {}),
      ...(input.color !== undefined ? { color: input.color } : {}),
    };
    const updated = { ...access.project, ...changes, updated_at: deps.clock.now().toISOString() };
    await trx
      .updateTable('projects')
      .set({ ...changes, updated_at: updated.updated_at })
      .where('id', '=', projectId)
      .execute();
    await recordAudit(
      trx,
      auditRow(deps.clock, principal, {
        action: 'project.update',
        projectId,
        detail: { fields: Object.keys(changes) },
      }),
    );
    return presentProject(updated, await projectEnvs(trx, projectId));
  });
}

/** Owner only. Variables, history, audit entries and memberships go with it (cascade). */
export async function deleteProject(deps: Deps, principal: Principal, projectId: string): Promise<void> {
  const access = await loadProjectAccess(deps.db, principal, projectId);
  requireOwner(principal);
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('projects').where('id', '=', projectId).execute();
    // Recorded at workspace level, since the project's own log is deleted with it.
    await recordAudit(
      trx,
      auditRow(deps.clock, principal, { action: 'project.delete', detail: { projectId, name: access.project.name } }),
    );
  });
  deps.keyring.forget(projectId);
}

export async function listEnvs(deps: Deps, principal: Principal, projectId: string): Promise<Environment[]> {
  await loadProjectAccess(deps.db, principal, projectId);
  const envs = await projectEnvs(deps.db, projectId);
  return envs.filter((e) => tokenAllowsEnv(principal, e.name)).map(presentEnv);
}

export async function createEnv(deps: Deps, principal: Principal, projectId: string, name: string): Promise<Project> {
  const access = await loadProjectAccess(deps.db, principal, projectId);
  requireProjectAdmin(access);
  return deps.db.transaction().execute(async (trx) => {
    const envs = await projectEnvs(trx, projectId);
    if (envs.some((e) => e.name === name)) throw new AppError('CONFLICT', 'this environment already exists', 'name');
    checkLimit(await workspacePlan(trx, principal.workspaceId), 'envsPerProject', envs.length + 1);
    const position = envs.reduce((m, e) => Math.max(m, e.position + 1), 0);
    await trx
      .insertInto('environments')
      .values({
        id: newId(),
        project_id: projectId,
        name,
        protected: defaultProtected(name) ? 1 : 0,
        color: defaultEnvColor(name),
        position,
        created_at: deps.clock.now().toISOString(),
      })
      .execute();
    await recordAudit(trx, auditRow(deps.clock, principal, { action: 'env.create', projectId, targetEnv: name }));
    return presentProject(access.project, [...envs, { name }]);
  });
}

/** D21: `protected` is Owner-only; `color` needs project Admin (or Owner). */
export async function updateEnv(
  deps: Deps,
  principal: Principal,
  projectId: string,
  name: string,
  input: { protected?: boolean | undefined; color?: string | undefined },
): Promise<Environment> {
  const access = await loadProjectAccess(deps.db, principal, projectId);
  const env = await findEnv(deps.db, projectId, name);
  if (input.protected !== undefined) requireOwner(principal);
  if (input.color !== undefined) requireProjectAdmin(access);
  const changes = {
    ...(input.protected !== undefined ? { protected: input.protected ? 1 : 0 } : {}),
    ...(input.color !== undefined ? { color: input.color } : {}),
  };
  await deps.db.transaction().execute(async (trx) => {
    if (Object.keys(changes).length > 0) {
      await trx.updateTable('environments').set(changes).where('id', '=', env.id).execute();
    }
    await recordAudit(
      trx,
      auditRow(deps.clock, principal, { action: 'env.update', projectId, targetEnv: name, detail: input }),
    );
  });
  return presentEnv({ ...env, ...changes });
}

export async function deleteEnv(deps: Deps, principal: Principal, projectId: string, name: string): Promise<void> {
  const access = await loadProjectAccess(deps.db, principal, projectId);
  requireProjectAdmin(access);
  const env = await findEnv(deps.db, projectId, name);
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('environments').where('id', '=', env.id).execute();
    await recordAudit(trx, auditRow(deps.clock, principal, { action: 'env.delete', projectId, targetEnv: name }));
  });
}

/** Compares the stored (literal) values of two environments; needs read on both. */
export async function diffEnvs(
  deps: Deps,
  principal: Principal,
  projectId: string,
  a: string,
  b: string,
): Promise<{ onlyInA: string[]; onlyInB: string[]; different: string[] }> {
  const access = await loadProjectAccess(deps.db, principal, projectId);
  const [envA, envB] = [await findEnv(deps.db, projectId, a), await findEnv(deps.db, projectId, b)];
  requireEnv(access, envA, 'read');
  requireEnv(access, envB, 'read');
  const [va, vb] = [await decryptEnvValues(deps, access, envA), await decryptEnvValues(deps, access, envB)];
  const sorted = (xs: Iterable<string>) => [...xs].sort();
  return {
    onlyInA: sorted([...va.keys()].filter((k) => !vb.has(k))),
    onlyInB: sorted([...vb.keys()].filter((k) => !va.has(k))),
    different: sorted([...va.keys()].filter((k) => vb.has(k) && va.get(k)!.value !== vb.get(k)!.value)),
  };
}

export function encodeCursor(id: number): string {
  return Buffer.from(String(id)).toString('base64url');
}
export function decodeCursor(cursor: string | undefined): number | null {
  if (cursor === undefined || cursor === '') return null;
  const id = Number(Buffer.from(cursor, 'base64url').toString());
  if (!Number.isSafeInteger(id) || id <= 0) throw new AppError('VALIDATION', 'invalid cursor', 'cursor');
  return id;
}

/** Audit page, newest first; `nextCursor` is "" on the last page (the spec types it as a string). */
export async function auditPage(
  db: Db,
  filter: { workspaceId: string; projectId?: string },
  limit: number,
  cursor: string | undefined,
) {
  const before = decodeCursor(cursor);
  let q = db.selectFrom('audit_logs').selectAll().where('workspace_id', '=', filter.workspaceId);
  if (filter.projectId) q = q.where('project_id', '=', filter.projectId);
  if (before !== null) q = q.where('id', '<', before);
  const rows = await q
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  return {
    logs: page.map((r) => ({
      id: Number(r.id),
      action: r.action,
      targetKey: r.target_key,
      targetEnv: r.target_env,
      actorId: r.actor_id,
      actorType: r.actor_type,
      detail: r.detail === null ? null : JSON.parse(r.detail),
      createdAt: r.created_at,
    })),
    nextCursor: rows.length > limit ? encodeCursor(Number(page[page.length - 1]!.id)) : '',
  };
}

/** Project audit: visible to project Admins and Owners (it reveals who touched what). */
export async function projectAudit(
  deps: Deps,
  principal: Principal,
  projectId: string,
  limit: number,
  cursor: string | undefined,
) {
  const access: ProjectAccess = await loadProjectAccess(deps.db, principal, projectId);
  if (access.role !== null && access.role !== 'Admin') {
    throw new AppError('FORBIDDEN', 'project Admin role is required to read the audit log');
  }
  return auditPage(deps.db, { workspaceId: principal.workspaceId, projectId }, limit, cursor);
}
