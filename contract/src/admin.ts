import { z } from 'zod';
import { timestamp, uuid } from './common.js';

/** D69: running your own instance. What an instance administrator sees and changes. */

/** D15's plans. */
export const planName = z.enum(['free', 'team', 'enterprise']);
/**
 * D69: who may sign up. `open`: anyone (the specification's default); `invite`: only an email with a pending
 * invite; `closed`: nobody (signup answers 403 SIGNUP_CLOSED).
 */
export const signupMode = z.enum(['open', 'invite', 'closed']);

export const adminWorkspace = z.object({
  id: uuid,
  name: z.string(),
  slug: z.string(),
  plan: z.string(),
  /** Members, not counting pending invites (the `members` limit counts those too, D15). */
  members: z.number().int(),
  projects: z.number().int(),
  createdAt: timestamp,
});
export const adminWorkspacesResponse = z.object({ workspaces: z.array(adminWorkspace) });
export const adminWorkspaceParams = z.strictObject({ id: uuid });
export const setPlanBody = z.strictObject({ plan: planName });

export const adminUser = z.object({
  id: uuid,
  name: z.string(),
  email: z.string(),
  instanceAdmin: z.boolean(),
  emailVerifiedAt: timestamp.nullable(),
  mfaEnabled: z.boolean(),
  /** How many workspaces the account is a member of. */
  workspaces: z.number().int(),
  createdAt: timestamp,
});
export const adminUsersResponse = z.object({ users: z.array(adminUser) });
export const adminUserParams = z.strictObject({ id: uuid });
/** D54's link, handed to the administrator instead of emailed; it voids the user's older link. */
export const resetLinkResponse = z.object({ link: z.string(), expiresAt: timestamp });

export const instanceSettings = z.object({ signup: signupMode });
export const updateInstanceSettingsBody = z.strictObject({ signup: signupMode });

export type PlanName = z.infer<typeof planName>;
export type SignupMode = z.infer<typeof signupMode>;
export type AdminWorkspace = z.infer<typeof adminWorkspace>;
export type AdminUser = z.infer<typeof adminUser>;
