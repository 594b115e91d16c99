/** Sign-up, login and the session (spec "Authentication"); the calls that start a session send no JWT. */
import type {
  acceptInviteResponse,
  authResponse,
  forgotPasswordResponse,
  inviteInfoResponse,
  loginBody,
  loginResponse,
  resetPasswordBody,
  sessionResponse,
  signupBody,
  switchWorkspaceResponse,
  verifyEmailResponse,
  verifyMfaBody,
  verifyMfaResponse,
} from '@svcenv/contract';
import type { z } from 'zod';
import { api } from '../api.js';

const anonymous = { auth: false } as const;

export const getSession = () => api.get<z.infer<typeof sessionResponse>>('/auth/session');

export const signup = (body: z.input<typeof signupBody>) =>
  api.post<z.infer<typeof authResponse>>('/auth/signup', body, anonymous);

export const login = (body: z.input<typeof loginBody>) =>
  api.post<z.infer<typeof loginResponse>>('/auth/login', body, anonymous);

export const verifyMfa = (body: z.input<typeof verifyMfaBody>) =>
  api.post<z.infer<typeof verifyMfaResponse>>('/auth/verify-mfa', body, anonymous);

/** D11: the token from the emailed link; works signed in or not. */
export const verifyEmail = (token: string) =>
  api.post<z.infer<typeof verifyEmailResponse>>('/auth/verify-email', { token }, anonymous);

export const resendVerification = () => api.post('/auth/resend-verification');

/** The invite page's greeting (ADR 0012): workspace, inviter and invited email; 404 for a dead link. */
export const inviteInfo = (token: string) => api.get<z.infer<typeof inviteInfoResponse>>('/auth/invite', { token });

/** D17: joins the invite's workspace; the answer carries a JWT scoped to it. */
export const acceptInvite = (token: string) =>
  api.post<z.infer<typeof acceptInviteResponse>>('/auth/accept-invite', { token });

export const switchWorkspace = (workspaceId: string) =>
  api.post<z.infer<typeof switchWorkspaceResponse>>('/auth/switch-workspace', { workspaceId });

/** D54: answers the same whether or not the address has an account. */
export const forgotPassword = (email: string) =>
  api.post<z.infer<typeof forgotPasswordResponse>>('/auth/forgot-password', { email }, anonymous);

/** D54: 204; with two-factor on and no `code`, 401 with field `code` (the page then asks for it). */
export const resetPassword = (body: z.input<typeof resetPasswordBody>) =>
  api.post<void>('/auth/reset-password', body, anonymous);
