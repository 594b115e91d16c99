import type { Selectable } from 'kysely';
import { cachedRows } from '../db/epoch-cache.js';
import { hotQuery } from '../db/hot-query.js';
import type { Db } from '../db/index.js';
import type { ProjectsTable } from '../db/schema.js';
import { AppError, forbidden, notFound } from '../lib/errors.js';
import type { Permission, Principal, ProjectRole } from './principal.js';

/**
 * The one authorization module: every permission decision of the API goes through here.
 *
 * Layers (spec "Authorization layers"): workspace role (Owner bypasses project checks), project role
 * defaults against the environment's `protected` flag, per-environment overrides. A token's access is the
 * intersection of that with its scope, its environment list and its project restriction (D32).
 */

export type ProjectRow = Selectable<ProjectsTable>;

export interface EnvRow {
  id: string;
  name: string;
  protected: number;
}

export interface ProjectAccess {
  principal: Principal;
  project: ProjectRow;
  /** null for an Owner, who bypasses project roles. */
  role: ProjectRole | null;
  /** Per-environment overrides of this user in this project, by environment id. */
  overrides: Map<string, Permission>;
}

const RANK: Record<Permission, number> = { none: 0, read: 1, write: 2 };

/** Role default for an environment (spec table; protection changes only the Developer default). */
export function roleDefault(role: ProjectRole, isProtected: boolean): Permission {
  if (role === 'Admin') return 'write';
  if (role === 'Read-only') return 'read';
  return isProtected ? 'none' : 'write';
}

/**
 * Loads a project the principal may see. A project in another workspace, or one a Member was not added
 * to, is 404 so that its existence does not leak (D23); a token restricted to another project is 403.
 */
export async function loadProjectAccess(
  db: Db,
  principal: Principal,
  projectId: string,
  /** A read-only request's epoch (db/epoch-cache.ts `requestEpoch`). */
  at?: number,
): Promise<ProjectAccess> {
  const q = accessQueries(db);
  const [project] = await cachedRows(
    db,
    `project|${projectId}|${principal.workspaceId}`,
    () => q.project(projectId, principal.workspaceId),
    at,
  );
  if (!project) throw notFound('project');
  if (principal.token?.projectId && principal.token.projectId !== projectId) {
    throw forbidden('this token is restricted to another project');
  }
  if (principal.wsRole === 'Owner') return { principal, project, role: null, overrides: new Map() };

  const [member] = await cachedRows(
    db,
    `member|${projectId}|${principal.userId}`,
    () => q.member(projectId, principal.userId),
    at,
  );
  if (!member) throw notFound('project');
  const rows = await cachedRows(
    db,
    `overrides|${projectId}|${principal.userId}`,
    () => q.overrides(projectId, principal.userId),
    at,
  );
  return {
    principal,
    project,
    role: member.role,
    overrides: new Map(rows.map((r) => [r.environment_id, r.permission])),
  };
}

/** Queries of every project request, compiled once per database handle (db/hot-query.ts). */
const compiled = new WeakMap<Db, ReturnType<typeof compileAccessQueries>>();
function accessQueries(db: Db) {
  let q = compiled.get(db);
  if (!q) {
    q = compileAccessQueries(db);
    compiled.set(db, q);
  }
  return q;
}

function compileAccessQueries(db: Db) {
  return {
    project: hotQuery(db, 2, (id: string, workspaceId: string) =>
      db.selectFrom('projects').selectAll().where('id', '=', id).where('workspace_id', '=', workspaceId),
    ),
    member: hotQuery(db, 2, (projectId: string, userId: string) =>
      db.selectFrom('project_members').select('role').where('project_id', '=', projectId).where('user_id', '=', userId),
    ),
    overrides: hotQuery(db, 2, (projectId: string, userId: string) =>
      db
        .selectFrom('env_permissions')
        .select(['environment_id', 'permission'])
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId),
    ),
    env: hotQuery(db, 2, (projectId: string, name: string) =>
      db
        .selectFrom('environments')
        .select(['id', 'project_id', 'name', 'protected', 'color', 'position', 'revision'])
        .where('project_id', '=', projectId)
        .where('name', '=', name),
    ),
  };
}

/** An environment of a project by name (compiled query; see accessQueries). */
export async function envByName(db: Db, projectId: string, name: string, at?: number) {
  const [env] = await cachedRows(db, `env|${projectId}|${name}`, () => accessQueries(db).env(projectId, name), at);
  return env;
}

/** The user's own permission on an environment, before any token restriction. */
function userPermission(access: ProjectAccess, env: EnvRow): Permission {
  if (access.role === null) return 'write';
  return access.overrides.get(env.id) ?? roleDefault(access.role, env.protected === 1);
}

export function tokenAllowsEnv(principal: Principal, envName: string): boolean {
  const t = principal.token;
  return !t || t.envs.includes('*') || t.envs.includes(envName);
}

/** Effective permission on an environment: user permission ∩ token scope ∩ token environments. */
export function envPermission(access: ProjectAccess, env: EnvRow): Permission {
  const user = userPermission(access, env);
  const t = access.principal.token;
  if (!t) return user;
  if (!tokenAllowsEnv(access.principal, env.name)) return 'none';
  const cap: Permission = t.scope === 'write' ? 'write' : 'read';
  return RANK[user] <= RANK[cap] ? user : cap;
}

export function requireEnv(access: ProjectAccess, env: EnvRow, need: 'read' | 'write'): void {
  if (!tokenAllowsEnv(access.principal, env.name)) {
    throw forbidden(`this token is restricted to other environments than "${env.name}"`);
  }
  if (RANK[envPermission(access, env)] < RANK[need]) {
    const what = need === 'write' ? 'write access' : 'read access';
    throw forbidden(`${what} to environment "${env.name}" is required`);
  }
}

/**
 * Project administration (environments, rename, recolour): Owner or project Admin (D23). Through a token
 * it also needs write scope and every environment, since it affects the whole project.
 */
export function requireProjectAdmin(access: ProjectAccess): void {
  const { principal } = access;
  if (principal.token && (principal.token.scope !== 'write' || !principal.token.envs.includes('*'))) {
    throw forbidden('project administration needs a write token for every environment');
  }
  if (access.role !== null && access.role !== 'Admin') throw forbidden('project Admin role is required');
}

/** Owner-only operations (spec: delete project, toggle protection, webhooks, rename workspace). */
export function requireOwner(principal: Principal): void {
  if (principal.wsRole !== 'Owner') throw forbidden('workspace Owner role is required');
  if (principal.token && (principal.token.scope !== 'write' || !principal.token.envs.includes('*'))) {
    throw forbidden('this operation needs a write token for every environment');
  }
}

export function requireUser(principal: Principal): void {
  if (principal.kind !== 'user') throw new AppError('UNAUTHORIZED', 'this endpoint requires a dashboard session (JWT)');
}
