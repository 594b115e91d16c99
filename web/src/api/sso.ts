/** Single sign-on for people (D63): the Owner's settings and their test; the start is a browser navigation. */
import type { putSsoBody, testSsoBody } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export type PutSsoBody = z.input<typeof putSsoBody>;
export type TestSsoBody = z.input<typeof testSsoBody>;

/** The workspace's configuration (never its client secret); 404 NOT_FOUND while there is none. */
export const getSso = () => api.call(e.getSso);

/** The whole configuration; `clientSecret` omitted keeps the stored one. */
export const putSso = (body: PutSsoBody) => api.call(e.putSso, { body });

export const deleteSso = () => api.call(e.deleteSso);

/** Fetches the issuer's discovery document and keys, without saving: {ok, …} or {ok: false, reason, message}. */
export const testSso = (body: TestSsoBody) => api.call(e.testSso, { body });

/**
 * The start URL for `email` once the server has answered it with its redirect to the identity provider; a
 * domain no workspace claims throws 404 NOT_FOUND (api.redirectTarget).
 */
export const ssoStartUrl = (email: string) => api.redirectTarget(e.ssoStart, { query: { email }, auth: false });
