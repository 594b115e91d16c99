import type { ProjectAccessView } from '@svcenv/contract';
import type { Selectable } from 'kysely';
import { cachedRows, type RowSnapshot, readEpoch } from '../../db/epoch-cache.js';
import { hotQuery } from '../../db/hot-query.js';
import type { Db } from '../../db/index.js';
import type { ProjectsTable } from '../../db/schema.js';
import { AppError, forbidden, notFound } from '../../lib/errors.js';
import type { Ctx } from './context.js';
import { grantLive, type Permission, type Principal, type ProjectRole } from './principal.js';

/**
 * The one authorization module: every permission decision of the API goes through here, and every
 * service reaches a project or an environment through `authorizeProject` or `authorizeEnv`.
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

/** An environment row as services use it: `revision` keys the pull caches. */
export interface EnvFull extends EnvRow {
  project_id: string;
  color: string;
  position: number;
  revision: number;
  /** D47: 1 when direct writes need an Owner or the project's Admin (requireDirectWrite). */
  require_approval: number;
  /** D75: override writes in the environment (0: none ever; pull then skips looking overrides up). */
  override_rev: number;
}

/**
 * What a caller needs on an environment: `read` or `write` (D23, spec "Authorization layers"),
 * `direct-write` (every D46 write of variables: `write`, and D47's approval rule, requireDirectWrite),
 * `admin` (project administration that names an environment: overrides, deletion; D22, D23), or `visible`
 * (the project is visible and the environment exists; the caller then checks what its operation needs).
 */
export type EnvNeed = 'read' | 'write' | 'direct-write' | 'admin' | 'visible';
type VarNeed = 'read' | 'write' | 'direct-write';

/**
 * The keys the authorization rows are cached under (db/epoch-cache.ts), also those a read-only request's
 * snapshot holds (services/identity/authn.ts).
 */
export const accessRowKeys = {
  project: (projectId: string, workspaceId: string) => `project|${projectId}|${workspaceId}`,
  member: (projectId: string, userId: string) => `member|${projectId}|${userId}`,
  overrides: (projectId: string, userId: string) => `overrides|${projectId}|${userId}`,
  env: (projectId: string, name: string) => `env|${projectId}|${name}`,
  /** D58: the id of the project a slug names in a workspace (services/projects/project-ref.ts). */
  slug: (workspaceId: string, slug: string) => `slug|${workspaceId}|${slug}`,
};

/** One environment of one project, as every environment route names it. */
export interface EnvTarget {
  projectId: string;
  env: string;
}

/** Plaintext reads (reveal=true) need write permission (spec, D23); masked reads need read. */
export const readNeed = (reveal: boolean): 'read' | 'write' => (reveal ? 'write' : 'read');

export interface EnvRequest extends EnvTarget {
  need: EnvNeed;
  /**
   * A read-only request (pull, export) reads at the counter value its authentication saw (Ctx.epoch);
   * a request that writes must read fresh rows.
   */
  readOnly?: boolean;
}

/**
 * The project's access for this caller and one of its environments, with the permission `need` checked.
 * Order of refusals: invisible project 404 (D23), then for `admin` the role (403) before the environment
 * (404), else the environment (404) before the permission (403).
 */
export async function authorizeEnv(ctx: Ctx, req: EnvRequest): Promise<{ access: ProjectAccess; env: EnvFull }> {
  const at = req.readOnly ? (ctx.epoch ?? readEpoch(ctx.deps.db)) : undefined;
  const snapshot = req.readOnly ? ctx.snapshot : undefined;
  const access = await loadProjectAccess(ctx.deps.db, ctx.principal, req.projectId, ctx.deps.clock.now(), at, snapshot);
  if (req.need === 'admin') requireProjectAdmin(access);
  const env = await findEnv(ctx.deps.db, req.projectId, req.env, at, snapshot);
  if (req.need === 'read' || req.need === 'write' || req.need === 'direct-write') requireVarNeed(access, env, req.need);
  return { access, env };
}

function requireVarNeed(access: ProjectAccess, env: EnvFull, need: VarNeed): void {
  requireEnv(access, env, need === 'read' ? 'read' : 'write');
  if (need === 'direct-write') requireDirectWrite(access, env);
}

/** `authorizeEnv` for several environments of one project (bulk upsert, diff), all with the same need. */
export async function authorizeEnvs(
  ctx: Ctx,
  req: { projectId: string; envs: string[]; need: VarNeed },
): Promise<{ access: ProjectAccess; envs: EnvFull[] }> {
  const access = await loadProjectAccess(ctx.deps.db, ctx.principal, req.projectId, ctx.deps.clock.now());
  const envs: EnvFull[] = [];
  for (const name of req.envs) {
    const env = await findEnv(ctx.deps.db, req.projectId, name);
    requireVarNeed(access, env, req.need);
    envs.push(env);
  }
  return { access, envs };
}

/**
 * The project's access for this caller: 404 when invisible (D23); with `need: 'admin'`, project Admin or
 * Owner (403 otherwise); with `need: 'owner'`, workspace Owner.
 */
export async function authorizeProject(
  ctx: Ctx,
  projectId: string,
  need: 'visible' | 'admin' | 'owner' = 'visible',
  /** Reads of a request that writes nothing use the epoch its authentication read, as authorizeEnv does. */
  readOnly = false,
): Promise<ProjectAccess> {
  const at = readOnly ? (ctx.epoch ?? readEpoch(ctx.deps.db)) : undefined;
  const access = await loadProjectAccess(
    ctx.deps.db,
    ctx.principal,
    projectId,
    ctx.deps.clock.now(),
    at,
    readOnly ? ctx.snapshot : undefined,
  );
  if (need === 'admin') requireProjectAdmin(access);
  if (need === 'owner') requireOwner(ctx.principal);
  return access;
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
async function loadProjectAccess(
  db: Db,
  principal: Principal,
  projectId: string,
  /** D73: the moment temporary grants are judged at. */
  now: Date,
  /** A read-only request's counter value (EnvRequest.readOnly). */
  at?: number,
  /** A read-only request's rows read with its credential (Ctx.snapshot). */
  snapshot?: RowSnapshot,
): Promise<ProjectAccess> {
  const q = accessQueries(db);
  const [project] = await cachedRows(
    db,
    accessRowKeys.project(projectId, principal.workspaceId),
    () => q.project(projectId, principal.workspaceId),
    at,
    snapshot,
  );
  if (!project) throw notFound('project');
  if (principal.token?.projectId && principal.token.projectId !== projectId) {
    throw forbidden('this token is restricted to another project');
  }
  if (principal.wsRole === 'Owner') return accessOf(principal, project, null, []);

  const [member] = await cachedRows(
    db,
    accessRowKeys.member(projectId, principal.userId),
    () => q.member(projectId, principal.userId),
    at,
    snapshot,
  );
  // D73: an expired temporary project role is no membership, at once (the row is the one read anyway).
  if (!member || !grantLive(member.expires_at, now)) throw notFound('project');
  const rows = await cachedRows(
    db,
    accessRowKeys.overrides(projectId, principal.userId),
    () => q.overrides(projectId, principal.userId),
    at,
    snapshot,
  );
  return accessOf(principal, project, member.role, rows, now);
}

/** The one place a ProjectAccess is made: a workspace Owner bypasses project roles (role null). */
function accessOf(
  principal: Principal,
  project: ProjectRow,
  memberRole: ProjectRole | null,
  overrides: readonly { environment_id: string; permission: Permission; expires_at?: string | null }[],
  /** D73: overrides whose time has passed are left out (the role default applies again). */
  now?: Date,
): ProjectAccess {
  if (principal.wsRole === 'Owner') return { principal, project, role: null, overrides: new Map() };
  if (memberRole === null) throw notFound('project');
  const live = now ? overrides.filter((r) => grantLive(r.expires_at, now)) : overrides;
  return {
    principal,
    project,
    role: memberRole,
    overrides: new Map(live.map((r) => [r.environment_id, r.permission])),
  };
}

/**
 * The caller's access to several projects at once (the project list, D57): one query for the roles and one
 * for the overrides of all of them, not three per project. Projects the caller cannot see are left out.
 */
export async function loadProjectAccesses(
  db: Db,
  principal: Principal,
  projects: readonly ProjectRow[],
  /** D73: the moment temporary grants are judged at. */
  now: Date = new Date(),
): Promise<Map<string, ProjectAccess>> {
  const visible = projects.filter(
    (p) =>
      p.workspace_id === principal.workspaceId && (!principal.token?.projectId || principal.token.projectId === p.id),
  );
  const out = new Map<string, ProjectAccess>();
  if (visible.length === 0) return out;
  if (principal.wsRole === 'Owner') {
    for (const p of visible) out.set(p.id, accessOf(principal, p, null, []));
    return out;
  }
  const ids = visible.map((p) => p.id);
  const [members, overrides] = await Promise.all([
    db
      .selectFrom('project_members')
      .select(['project_id', 'role', 'expires_at'])
      .where('user_id', '=', principal.userId)
      .where('project_id', 'in', ids)
      .execute(),
    db
      .selectFrom('env_permissions')
      .select(['project_id', 'environment_id', 'permission', 'expires_at'])
      .where('user_id', '=', principal.userId)
      .where('project_id', 'in', ids)
      .execute(),
  ]);
  // D73: expired temporary roles and overrides count for nothing, as in loadProjectAccess.
  const roles = new Map(members.filter((m) => grantLive(m.expires_at, now)).map((m) => [m.project_id, m.role]));
  for (const p of visible) {
    const role = roles.get(p.id);
    if (role === undefined) continue;
    out.set(
      p.id,
      accessOf(
        principal,
        p,
        role,
        overrides.filter((o) => o.project_id === p.id),
        now,
      ),
    );
  }
  return out;
}

/**
 * The access of a project's creator right after creating it (D20: they become its Admin), without reading
 * back the rows the same transaction just wrote.
 */
export function creatorAccess(principal: Principal, project: ProjectRow): ProjectAccess {
  return accessOf(principal, project, 'Admin', []);
}

/**
 * D57: the caller's access as clients see it, decided by the very checks the operations run (envPermission,
 * requireProjectAdmin, requireOwner), so the answer cannot drift from what the server then allows.
 * `envs` must be every environment of the project.
 */
export function describeAccess(access: ProjectAccess, envs: readonly EnvRow[]): ProjectAccessView {
  return {
    role: access.role ?? 'Owner',
    envs: Object.fromEntries(envs.map((e) => [e.name, envPermission(access, e)])),
    admin: passes(() => requireProjectAdmin(access)),
    owner: passes(() => requireOwner(access.principal)),
  };
}

/** Whether a check passes: its FORBIDDEN is a "no"; any other failure is a real error. */
function passes(check: () => void): boolean {
  try {
    check();
    return true;
  } catch (e) {
    if (e instanceof AppError && e.code === 'FORBIDDEN') return false;
    throw e;
  }
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
      db
        .selectFrom('project_members')
        .select(['role', 'expires_at'])
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId),
    ),
    overrides: hotQuery(db, 2, (projectId: string, userId: string) =>
      db
        .selectFrom('env_permissions')
        .select(['environment_id', 'permission', 'expires_at'])
        .where('project_id', '=', projectId)
        .where('user_id', '=', userId),
    ),
    env: hotQuery(db, 2, (projectId: string, name: string) =>
      db
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
        .where('name', '=', name),
    ),
  };
}

/** An environment of a project by name (compiled query; see accessQueries), or 404. */
async function findEnv(db: Db, projectId: string, name: string, at?: number, snapshot?: RowSnapshot): Promise<EnvFull> {
  const [env] = await cachedRows(
    db,
    accessRowKeys.env(projectId, name),
    () => accessQueries(db).env(projectId, name),
    at,
    snapshot,
  );
  if (!env) throw notFound(`environment "${name}"`);
  return env;
}

/** The user's own permission on an environment, before any token restriction. */
/** The person's own permission on an environment, before any token's cap (D74 asks what a person lacks). */
export function userPermission(access: ProjectAccess, env: EnvRow): Permission {
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

/**
 * D47, the one place of the approval rule: on an environment that requires approval, a direct write of its
 * variables (every D46 write) is for an Owner or the project's Admin through a dashboard session; anyone else,
 * and every access token (automation has no one to vouch for it), gets APPROVAL_REQUIRED and proposes the
 * change as a change request instead. Called after the write permission was checked.
 */
export function requireDirectWrite(access: ProjectAccess, env: Pick<EnvFull, 'name' | 'require_approval'>): void {
  if (Number(env.require_approval) !== 1) return;
  if (access.principal.token === null && (access.role === null || access.role === 'Admin')) return;
  throw new AppError(
    'APPROVAL_REQUIRED',
    `environment "${env.name}" requires approval: propose the change as a change request, which an Owner or project Admin approves`,
  );
}

/**
 * D47: who may approve or reject a change request: an Owner or the project's Admin, with write permission on
 * the environment (the approval writes as them), through a dashboard session: an approval is a person's
 * decision, so no access token makes one (ADR 0013). The author's own approval is refused by the caller.
 */
export function requireApprover(access: ProjectAccess, env: EnvRow): void {
  if (access.principal.token !== null)
    throw forbidden('approving or rejecting a change request needs a dashboard session');
  if (access.role !== null && access.role !== 'Admin') {
    throw forbidden('approving or rejecting a change request needs the Owner or project Admin role');
  }
  requireEnv(access, env, 'write');
}

/** Owner-only operations (spec: delete project, toggle protection, webhooks, rename workspace). */
export function requireOwner(principal: Principal): void {
  if (principal.wsRole !== 'Owner') throw forbidden('workspace Owner role is required');
  if (principal.token && (principal.token.scope !== 'write' || !principal.token.envs.includes('*'))) {
    throw forbidden('this operation needs a write token for every environment');
  }
}

/**
 * D73: a grant's `expiresAt` as stored (ISO 8601, UTC), or null for a permanent grant; one not after `now`
 * is 400 VALIDATION naming the field, before anything changes.
 */
export function grantExpiry(expiresAt: string | null | undefined, now: Date): string | null {
  if (expiresAt == null) return null;
  const ms = Date.parse(expiresAt);
  if (!Number.isFinite(ms) || ms <= now.getTime()) {
    throw new AppError('VALIDATION', 'expiresAt must be a time in the future', 'expiresAt');
  }
  return new Date(ms).toISOString();
}

export function requireUser(principal: Principal): void {
  if (principal.kind !== 'user') throw new AppError('UNAUTHORIZED', 'this endpoint requires a dashboard session (JWT)');
}
