import { z } from 'zod';
import { envName, projectRef, timestamp, uuid } from './common.js';

/**
 * D74: access requests. A project member asks for read or write on one environment for a while; an Owner
 * or project Admin other than the requester approves (a D73 temporary permission), denies, or lets it
 * expire after 24 hours; the requester may withdraw it while it is pending.
 */
export const ACCESS_REQUEST_STATUSES = ['pending', 'approved', 'denied', 'withdrawn', 'expired'] as const;
export const accessRequestStatus = z.enum(ACCESS_REQUEST_STATUSES);
export const ACCESS_REQUEST_MIN_SECONDS = 300;
export const ACCESS_REQUEST_MAX_SECONDS = 604_800;
export const requestedPermission = z.enum(['read', 'write']);
export const accessDuration = z.number().int().min(ACCESS_REQUEST_MIN_SECONDS).max(ACCESS_REQUEST_MAX_SECONDS);

export const accessRequestsParams = z.strictObject({ id: projectRef });
export const accessRequestParams = z.strictObject({ id: projectRef, requestId: uuid });

export const createAccessRequestBody = z.strictObject({
  env: envName,
  permission: requestedPermission,
  durationSeconds: accessDuration,
  reason: z.string().trim().min(1).max(500),
});
/** Without `durationSeconds` the asked duration is granted; a longer one than asked is 400 VALIDATION. */
export const approveAccessRequestBody = z.strictObject({ durationSeconds: accessDuration.optional() }).nullish();
export const denyAccessRequestBody = z.strictObject({ reason: z.string().trim().max(500).optional() }).nullish();
export const listAccessRequestsQuery = z.strictObject({ status: accessRequestStatus.optional() });

export const accessRequest = z.object({
  id: uuid,
  projectId: uuid,
  env: z.string(),
  permission: requestedPermission,
  durationSeconds: z.number().int(),
  reason: z.string(),
  status: accessRequestStatus,
  /** The person asking (a token's creator when a token asked). */
  requesterId: uuid,
  requesterName: z.string(),
  requesterEmail: z.string(),
  createdAt: timestamp,
  /** A pending request expires then (24 hours after it was made). */
  pendingUntil: timestamp,
  /** Once decided (approved, denied, withdrawn, expired): by whom (not for withdrawn or expired) and when. */
  decidedById: uuid.optional(),
  decidedByName: z.string().optional(),
  decidedAt: timestamp.optional(),
  /** A denial's reason. */
  decisionReason: z.string().optional(),
  /** An approval: how long was granted, and when that grant ends (it counts from the approval). */
  grantedSeconds: z.number().int().optional(),
  grantExpiresAt: timestamp.optional(),
});
/** The answer of a new request: how many approvers were asked, and whether by email (no SMTP: dashboard only). */
export const createdAccessRequest = accessRequest.extend({
  notified: z.object({ approvers: z.number().int(), email: z.boolean() }),
});
export const accessRequestsResponse = z.object({ accessRequests: z.array(accessRequest) });

/** D76: who can read or write an environment now, and why. */
export const ACCESS_SOURCES = ['owner', 'role', 'env-permission', 'request'] as const;
export const accessEntry = z.object({
  userId: uuid,
  name: z.string(),
  email: z.string(),
  permission: requestedPermission,
  source: z.enum(ACCESS_SOURCES),
  /** When this access ends by itself (the earliest of the grants it rests on); null: standing access. */
  expiresAt: timestamp.nullable(),
  /** The D74 request that granted it (source `request`); null otherwise. */
  requestId: uuid.nullable(),
});
export const envAccessResponse = z.object({ access: z.array(accessEntry) });

export type AccessRequest = z.infer<typeof accessRequest>;
export type AccessEntry = z.infer<typeof accessEntry>;
