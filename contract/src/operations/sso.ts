import { noContent } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import * as s from '../sso.js';
import { defineOperation } from './define.js';

/**
 * D63: single sign-on. The settings are an Owner's, through a dashboard session (D10); start and callback are
 * browser navigations without a credential, answered with 302 redirects (ADR 0025).
 */
const tags = ['sso'];

export const getSso = defineOperation(e.getSso, { tags, responses: { 200: s.ssoConfig } });
export const putSso = defineOperation(e.putSso, { tags, body: s.putSsoBody, responses: { 200: s.ssoConfig } });
export const deleteSso = defineOperation(e.deleteSso, { tags, responses: { 204: noContent } });
export const testSso = defineOperation(e.testSso, {
  tags,
  body: s.testSsoBody,
  responses: { 200: s.testSsoResponse },
});
/** 302 to the identity provider's authorization endpoint; 404 NOT_FOUND when no workspace signs in this way. */
export const ssoStart = defineOperation(e.ssoStart, { tags, query: s.ssoStartQuery });
/** Always a 302: to `PUBLIC_URL/` signed in, or to `PUBLIC_URL/login?sso_error=<reason>` (SSO_ERRORS). */
export const ssoCallback = defineOperation(e.ssoCallback, { tags, query: s.ssoCallbackQuery });
