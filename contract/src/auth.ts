import { z } from 'zod';
import { timestamp, uuid } from './common.js';

/** D8: 8 to 128 characters. */
export const password = z.string().min(8, 'must be at least 8 characters').max(128, 'must be at most 128 characters');
/** Surrounding spaces (a pasted address) are dropped before the address is checked. */
export const email = z.string().trim().pipe(z.email().max(254));

export const signupBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  email,
  password,
});
export const loginBody = z.strictObject({ email: z.string().max(254), password: z.string().max(1024) });
export const switchWorkspaceBody = z.strictObject({ workspaceId: uuid });

export const publicUser = z.object({ id: uuid, name: z.string(), email: z.string() });
export const sessionUser = publicUser.extend({
  workspaceId: uuid,
  workspaceName: z.string(),
  wsRole: z.enum(['Owner', 'Member']),
  emailVerifiedAt: timestamp.nullable(),
  /** D69: an administrator of this instance (read from the database, like the role). */
  instanceAdmin: z.boolean(),
});

export const authResponse = z.object({ token: z.string(), user: publicUser });
export const loginResponse = z.union([
  z.object({ token: z.string(), user: sessionUser }),
  z.object({ mfaRequired: z.literal(true), mfaToken: z.string() }),
]);
export const sessionResponse = z.object({ user: sessionUser });
export const switchWorkspaceResponse = z.object({ token: z.string(), workspaceId: uuid, workspaceName: z.string() });

export type SessionUser = z.infer<typeof sessionUser>;

/**
 * What this server offers people signing in, before they have a session: `emailDelivery` is false when it has
 * no SMTP_URL (D3, ADR 0021), so the dashboard offers what works without email instead of promising a message
 * that never comes; `signup` is the instance's signup mode (D69), so the sign-up page says when it is closed
 * or by invitation only (it tells nothing a signup attempt would not).
 */
export const authOptionsResponse = z.object({
  emailDelivery: z.boolean(),
  signup: z.enum(['open', 'invite', 'closed']),
});

/** D54: asks for a reset link; the answer is the same whether or not the address has an account. */
export const forgotPasswordBody = z.strictObject({ email });
export const forgotPasswordResponse = z.object({ sent: z.literal(true) });
/**
 * D54: the emailed token, the new password (D8 rules, field `newPassword`) and, when two-factor is on, a
 * TOTP or backup code, bounded like account.ts's `mfaCode` (repeated: account.ts imports this module, and
 * the layering check forbids the cycle).
 */
export const resetPasswordBody = z.strictObject({
  token: z.string().min(1).max(256),
  newPassword: password,
  code: z.string().trim().min(6, 'must be a 6-digit code or a backup code').max(32).optional(),
});
