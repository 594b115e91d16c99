/** Sign-up, login and the session (spec "Authentication"); the calls that start a session send no JWT. */
import type { loginBody, resetPasswordBody, signupBody, verifyMfaBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

const anonymous = { auth: false } as const;

export const getSession = () => api.call(e.getSession);

export const signup = (body: z.input<typeof signupBody>) => api.call(e.signup, { body, ...anonymous });

export const login = (body: z.input<typeof loginBody>) => api.call(e.login, { body, ...anonymous });

export const verifyMfa = (body: z.input<typeof verifyMfaBody>) => api.call(e.verifyMfa, { body, ...anonymous });

/** D11: the token from the emailed link; works signed in or not. */
export const verifyEmail = (token: string) => api.call(e.verifyEmail, { body: { token }, ...anonymous });

export const resendVerification = () => api.call(e.resendVerification);

/** The invite page's greeting (ADR 0012): workspace, inviter and invited email; 404 for a dead link. */
export const inviteInfo = (token: string) => api.call(e.inviteInfo, { query: { token } });

/** D17: joins the invite's workspace; the answer carries a JWT scoped to it. */
export const acceptInvite = (token: string) => api.call(e.acceptInvite, { body: { token } });

export const switchWorkspace = (workspaceId: string) => api.call(e.switchWorkspace, { body: { workspaceId } });

/** What the server offers people signing in: email delivery (ADR 0021) and its signup mode (D69), asked now. */
export const fetchAuthOptions = () => api.call(e.authOptions, anonymous);

let options: ReturnType<typeof fetchAuthOptions> | null = null;
/**
 * ADR 0021: whether the server sends email (false without SMTP_URL). Asked once per page load, since it changes
 * only with a restart; a failed look-up is asked again next time. (The signup mode can change while a page is
 * open: the sign-up page asks fetchAuthOptions itself.)
 */
export const authOptions = () => {
  options ??= fetchAuthOptions().catch((err: unknown) => {
    options = null;
    throw err;
  });
  return options;
};

/** D54: answers the same whether or not the address has an account. */
export const forgotPassword = (email: string) => api.call(e.forgotPassword, { body: { email }, ...anonymous });

/** D54: 204; with two-factor on and no `code`, 401 with field `code` (the page then asks for it). */
export const resetPassword = (body: z.input<typeof resetPasswordBody>) =>
  api.call(e.resetPassword, { body, ...anonymous });
