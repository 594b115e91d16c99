import { z } from 'zod';
import { auditLimit, color, envName, projectRef, projectSlug, timestamp, uuid } from './common.js';
import { envPermissionValue, projectRole } from './workspace.js';

/**
 * D57: what the caller may do in a project, computed by the server with the same rules as every check
 * (server/src/services/core/authz.ts), so a client shows only the controls the server would allow.
 * `role`: the caller's project role, or "Owner" for a workspace Owner (who bypasses project roles; their
 * project membership, if any, is not what decides). Through an access token it is the creating user's role,
 * while `envs`, `admin` and `owner` already include the token's scope and environment list.
 * `envs`: every environment of the project (the same names as `Project.envs`) with the effective permission.
 * `admin`: project administration (add, delete or recolour an environment, edit the project, members).
 * `owner`: Owner-only operations (environment protection, deleting the project).
 */
export const projectAccess = z.object({
  role: z.union([z.literal('Owner'), projectRole]),
  envs: z.record(z.string(), envPermissionValue),
  admin: z.boolean(),
  owner: z.boolean(),
});

export const project = z.object({
  id: uuid,
  name: z.string(),
  /** D48 */
  slug: z.string(),
  desc: z.string().optional(),
  color: z.string(),
  envs: z.array(z.string()),
  access: projectAccess,
});
export const listProjectsResponse = z.object({ projects: z.array(project) });
export const projectName = z.string().trim().min(1).max(100);

export const createProjectBody = z.strictObject({
  name: projectName,
  desc: z.string().max(1000).optional(),
  color: color.optional(),
  envs: z.array(envName).min(1).max(100).optional(),
});
export const updateProjectBody = z.strictObject({
  name: projectName.optional(),
  slug: projectSlug.optional(),
  desc: z.string().max(1000).optional(),
  color: color.optional(),
});
export const projectParams = z.strictObject({ id: projectRef });
export const envParams = z.strictObject({ id: projectRef, env: envName });

/** D47: `requireApproval` turns direct writes by others than Owners and project Admins into change requests. */
export const environment = z.object({
  name: z.string(),
  protected: z.boolean(),
  color: z.string(),
  requireApproval: z.boolean(),
});
export const listEnvsResponse = z.object({ envs: z.array(environment) });
export const createEnvBody = z.strictObject({ name: envName });
export const updateEnvBody = z.strictObject({
  protected: z.boolean().optional(),
  color: color.optional(),
  requireApproval: z.boolean().optional(),
});

export const diffQuery = z.strictObject({ env: z.array(envName).length(2, 'exactly two env parameters are required') });
/**
 * Keys compared as a pull gives them, references resolved for the caller (ADR 0026). `different`: the pulled
 * values differ; `sameByReference`: the stored text differs but both resolve to the same value (not in
 * `different`).
 */
export const diffResponse = z.object({
  onlyInA: z.array(z.string()),
  onlyInB: z.array(z.string()),
  different: z.array(z.string()),
  sameByReference: z.array(z.string()),
});

const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Whether an instant is one of the years 1 to 9999 (UTC), the times every audit entry's `created_at` can be
 * compared with: PostgreSQL's `timestamptz` has no year 0 (`0000-01-01` is refused with an error), and an
 * instant past 9999 is written `+010000-...` by `toISOString`, which no database reads as a time.
 */
export function auditTimeInRange(at: Date): boolean {
  const year = at.getUTCFullYear();
  return !Number.isNaN(at.getTime()) && year >= 1 && year <= 9999;
}

/**
 * One end of an audit date filter (ADR 0015): a day `YYYY-MM-DD` (UTC) or an ISO 8601 date-time with `Z` or an
 * offset, turned into the UTC instant the stored `created_at` compares with. Both ends are inclusive: a day as
 * `from` starts at its first millisecond, a day as `to` ends at its last.
 */
function auditBound(end: 'from' | 'to') {
  return z
    .string()
    .max(40)
    .transform((s, ctx) => {
      let at: Date | null = null;
      if (ISO_DAY.test(s)) {
        const d = new Date(`${s}T${end === 'from' ? '00:00:00.000' : '23:59:59.999'}Z`);
        // 2026-02-30 parses as March 2nd: only a day that reads back the same is a day.
        if (!Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s) at = d;
      } else if (ISO_INSTANT.test(s)) {
        const d = new Date(s);
        if (!Number.isNaN(d.getTime())) at = d;
      }
      if (!at || !auditTimeInRange(at)) {
        ctx.addIssue({
          code: 'custom',
          message: 'must be an ISO 8601 date (YYYY-MM-DD) or date-time with a time zone, in the years 1 to 9999',
        });
        return z.NEVER;
      }
      return at.toISOString();
    });
}

/**
 * Both audit endpoints (D36): `limit` and `cursor` page the filtered list, newest first. `action` is one action
 * name, `actor` an actor's id (a user's, or an access token's), `from`/`to` the inclusive time range.
 */
export const auditQuery = z.strictObject({
  limit: auditLimit,
  cursor: z.string().max(200).optional(),
  action: z
    .string()
    .regex(/^[a-z_]{1,40}\.[a-z_]{1,40}$/, 'must be an audit action such as var.update (D36)')
    .optional(),
  actor: uuid.optional(),
  from: auditBound('from').optional(),
  to: auditBound('to').optional(),
});
export const auditEntry = z.object({
  id: z.number().int(),
  action: z.string(),
  targetKey: z.string().nullable(),
  targetEnv: z.string().nullable(),
  actorId: uuid.nullable(),
  actorType: z.enum(['user', 'token']),
  /**
   * The actor as people read it (D34's form): the user's name, or `token:<token name>`; null when the actor's
   * row is gone.
   */
  actorName: z.string().nullable(),
  detail: z.unknown().nullable(),
  createdAt: timestamp,
  /**
   * Added to the specification's entry: the project the entry is about, so the workspace log, which spans
   * every project, can say which one `targetEnv` belongs to; null for workspace and account entries.
   */
  project: z.object({ id: uuid, name: z.string(), slug: z.string() }).nullable(),
  /**
   * Added too: the names of the people `detail` names by id (its `userId`, a change request's `author`), by
   * id, so a log reads "Ann" rather than a uuid; absent when the detail names nobody.
   */
  detailNames: z.record(uuid, z.string()).optional(),
});
/** `nextCursor` is "" on the last page. */
export const auditPage = z.object({ logs: z.array(auditEntry), nextCursor: z.string() });

export type Project = z.infer<typeof project>;
export type ProjectAccessView = z.infer<typeof projectAccess>;
export type Environment = z.infer<typeof environment>;
export type AuditEntry = z.infer<typeof auditEntry>;
export type AuditQuery = z.input<typeof auditQuery>;
