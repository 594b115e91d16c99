import { z } from 'zod';
import { password, sessionUser } from './auth.js';
import { timestamp, uuid } from './common.js';

/** Account security: D11 email verification, D12 account endpoints, D13 two-factor. */

/**
 * What a user types as a second factor: a 6-digit TOTP code or a backup code (`xxxx-xxxx-xxxx`, spaces,
 * dashes and case ignored). Bounded before any work is done.
 */
export const mfaCode = z.string().trim().min(6, 'must be a 6-digit code or a backup code').max(32);

export const verifyMfaBody = z.strictObject({ mfaToken: z.string().min(1).max(256), code: mfaCode });
export const verifyMfaResponse = z.object({ token: z.string(), user: sessionUser });

export const verifyEmailBody = z.strictObject({ token: z.string().min(1).max(256) });
/** D11: the account whose email is now verified. */
export const accountUser = z.object({
  id: uuid,
  name: z.string(),
  email: z.string(),
  emailVerifiedAt: timestamp.nullable(),
});
export const verifyEmailResponse = z.object({ user: accountUser });
export const resendVerificationResponse = z.object({ sent: z.literal(true) });

export const meResponse = z.object({ user: sessionUser });
export const updateMeBody = z.strictObject({ name: z.string().trim().min(1).max(100) });
export const changePasswordBody = z.strictObject({
  currentPassword: z.string().min(1).max(1024),
  newPassword: password,
});
export const myWorkspacesResponse = z.object({
  workspaces: z.array(z.object({ id: uuid, name: z.string(), slug: z.string(), wsRole: z.enum(['Owner', 'Member']) })),
});

/** D68: which of the caller's workspaces holds a project they can see (the dashboard then switches there). */
export const projectWorkspaceQuery = z.strictObject({ project: z.string().min(1).max(200) });
export const projectWorkspaceResponse = z.object({ workspaceId: uuid, workspaceName: z.string(), projectId: uuid });

export const mfaSetupResponse = z.object({ secret: z.string(), otpauthUrl: z.string() });
export const mfaCodeBody = z.strictObject({ code: mfaCode });
/** D12: ten codes, shown once. */
export const backupCodesResponse = z.object({ backupCodes: z.array(z.string()).length(10) });

export type AccountUser = z.infer<typeof accountUser>;
