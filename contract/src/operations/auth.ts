import * as account from '../account.js';
import * as auth from '../auth.js';
import { emptyBody, noContent } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import { inviteInfoQuery, inviteInfoResponse } from '../workspace.js';
import { defineOperation } from './define.js';

/** Spec "Authentication": sign-up, login, two-factor (D12), email verification (D11), resets (D54). */
const tags = ['auth'];

export const signup = defineOperation(e.signup, {
  tags,
  body: auth.signupBody,
  responses: { 201: auth.authResponse },
});
export const login = defineOperation(e.login, { tags, body: auth.loginBody, responses: { 200: auth.loginResponse } });
export const verifyMfa = defineOperation(e.verifyMfa, {
  tags,
  body: account.verifyMfaBody,
  responses: { 200: account.verifyMfaResponse },
});
export const verifyEmail = defineOperation(e.verifyEmail, {
  tags,
  body: account.verifyEmailBody,
  responses: { 200: account.verifyEmailResponse },
});
export const resendVerification = defineOperation(e.resendVerification, {
  tags,
  body: emptyBody,
  responses: { 202: account.resendVerificationResponse },
});
/** Ends the dashboard's session in this browser (the cookie). */
export const logout = defineOperation(e.logout, { tags, body: emptyBody, responses: { 204: noContent } });
export const forgotPassword = defineOperation(e.forgotPassword, {
  tags,
  body: auth.forgotPasswordBody,
  responses: { 202: auth.forgotPasswordResponse },
});
export const resetPassword = defineOperation(e.resetPassword, {
  tags,
  body: auth.resetPasswordBody,
  responses: { 204: noContent },
});
/** Public: an invite's workspace and inviter, for the invite page. */
export const inviteInfo = defineOperation(e.inviteInfo, {
  tags,
  query: inviteInfoQuery,
  responses: { 200: inviteInfoResponse },
});
/** Public: whether the server can send email (ADR 0021), for the sign-in pages and the banner. */
export const authOptions = defineOperation(e.authOptions, { tags, responses: { 200: auth.authOptionsResponse } });
export const getSession = defineOperation(e.getSession, { tags, responses: { 200: auth.sessionResponse } });
export const switchWorkspace = defineOperation(e.switchWorkspace, {
  tags,
  body: auth.switchWorkspaceBody,
  responses: { 200: auth.switchWorkspaceResponse },
});
