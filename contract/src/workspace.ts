import { z } from 'zod';
import { email } from './auth.js';
import { auditLimit, envName, timestamp, uuid } from './common.js';

export const wsRole = z.enum(['Owner', 'Member']);
export const projectRole = z.enum(['Admin', 'Developer', 'Read-only']);
export const envPermissionValue = z.enum(['none', 'read', 'write']);

export const workspace = z.object({ id: uuid, name: z.string(), slug: z.string() });
export const updateWorkspaceBody = z.strictObject({ name: z.string().trim().min(1).max(100) });

const limits = z.object({ projects: z.number().int(), members: z.number().int(), envsPerProject: z.number().int() });
export const billing = z.object({
  plan: z.string(),
  limits,
  usage: z.object({ projects: z.number().int(), members: z.number().int() }),
});
export const connections = z.object({ operator: z.object({ connected: z.boolean(), lastSync: timestamp.nullable() }) });
export const stats = z.object({
  memberCount: z.number().int(),
  projectCount: z.number().int(),
  variableCount: z.number().int(),
  tokenCount: z.number().int(),
});

/**
 * D73: when a temporary grant ends (an ISO 8601 time with its offset); the server refuses one not in the
 * future (400). Absent or null: permanent.
 */
export const grantExpiresAt = z.iso.datetime({ offset: true }).nullable().optional();

export const member = z.object({
  id: uuid,
  name: z.string(),
  email: z.string(),
  wsRole,
  joinedAt: timestamp,
  /** D73: when a temporary role ends (an Owner is then a Member again, a Member's membership ends). */
  expiresAt: timestamp.nullable(),
});
export const membersResponse = z.object({ members: z.array(member) });
export const memberParams = z.strictObject({ userId: uuid });
export const updateMemberBody = z.strictObject({ wsRole, expiresAt: grantExpiresAt });

export const inviteBody = z.strictObject({ email, wsRole: wsRole.default('Member') });
export const inviteAddedResponse = z.object({ userId: uuid, name: z.string(), wsRole });
/**
 * `inviteUrl` only when the server cannot send email (no SMTP_URL, D3): the link then reaches nobody (the log
 * line names only recipient, subject and kind), so the inviting Owner gets it to hand over
 * (docs/decisions/0012-invite-link.md, 0021-without-email.md). With SMTP it is never here.
 */
export const inviteSentResponse = z.object({
  invited: z.literal(true),
  email: z.string(),
  inviteUrl: z.string().optional(),
});
export const pendingInvite = z.object({
  id: uuid,
  email: z.string(),
  wsRole,
  invitedBy: uuid.nullable(),
  createdAt: timestamp,
  expiresAt: timestamp,
});
export const invitesResponse = z.object({ invites: z.array(pendingInvite) });
export const inviteParams = z.strictObject({ id: uuid });

/** The invite page's greeting: who invited whom to which workspace; a live token only (else 404). */
export const inviteInfoQuery = z.strictObject({ token: z.string().min(1).max(200) });
export const inviteInfoResponse = z.object({ workspaceName: z.string(), inviterName: z.string(), email: z.string() });

export const acceptInviteBody = z.strictObject({ token: z.string().min(1).max(200) });
export const acceptInviteResponse = z.object({
  token: z.string(),
  workspaceId: uuid,
  workspaceName: z.string(),
  wsRole,
});

export const workspaceAuditQuery = z.strictObject({
  limit: auditLimit,
  cursor: z.string().max(200).optional(),
});

/** D22: project membership. `envPermissions` lists only the overrides. */
export const projectMember = z.object({
  userId: uuid,
  name: z.string(),
  email: z.string(),
  role: projectRole,
  envPermissions: z.record(z.string(), envPermissionValue),
  /** D73: when a temporary project role ends; null: permanent. */
  expiresAt: timestamp.nullable(),
  /** D73: the temporary ones among `envPermissions`, by environment: when each ends. */
  envPermissionExpiry: z.record(z.string(), timestamp),
});
export const projectMembersResponse = z.object({ members: z.array(projectMember) });
export const projectMemberParams = z.strictObject({ id: uuid, userId: uuid });
export const projectMemberEnvParams = z.strictObject({ id: uuid, userId: uuid, env: envName });
export const setProjectRoleBody = z.strictObject({ role: projectRole, expiresAt: grantExpiresAt });
export const setEnvPermissionBody = z.strictObject({ permission: envPermissionValue, expiresAt: grantExpiresAt });

export type Workspace = z.infer<typeof workspace>;
export type Member = z.infer<typeof member>;
export type ProjectMember = z.infer<typeof projectMember>;
