import { z } from 'zod';
import { timestamp } from './common.js';

/**
 * D63: single sign-on for people (OpenID Connect, code flow with PKCE). One configuration per workspace,
 * set by its Owners (ADR 0025).
 */

/** The most email domains one workspace may claim. */
export const MAX_SSO_DOMAINS = 50;

/**
 * An email domain a workspace claims (`example.com`, not `@example.com` nor a URL): lower-cased, 1-253
 * characters of dot-separated labels of letters, digits and `-`, with at least one dot.
 */
export const ssoDomain = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(
    /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
    'must be an email domain such as example.com',
  );

const ssoFields = {
  /** An absolute https URL; http, loopback and private addresses only as D5 allows (D60's rules, the server's). */
  issuer: z.string().trim().min(1).max(2048),
  clientId: z.string().trim().min(1).max(512),
  /** Written only: never answered. Required on the first PUT; omitted on a later one keeps the stored secret. */
  clientSecret: z.string().min(1).max(2048),
  domains: z
    .array(ssoDomain)
    .min(1, 'list at least one email domain')
    .max(MAX_SSO_DOMAINS, `at most ${MAX_SSO_DOMAINS} domains`)
    .refine((list) => new Set(list).size === list.length, 'a domain is listed twice'),
  enforce: z.boolean(),
};

/** `PUT /v1/workspace/sso`: the whole configuration (a replacement, not a patch), the secret aside. */
export const putSsoBody = z.strictObject({
  issuer: ssoFields.issuer,
  clientId: ssoFields.clientId,
  clientSecret: ssoFields.clientSecret.optional(),
  domains: ssoFields.domains,
  /** D63: password login refused (403 SSO_REQUIRED) in these domains, except for the workspace's Owners. */
  enforce: ssoFields.enforce.default(false),
});

/**
 * `POST /v1/workspace/sso/test`: what would be saved (or is: the stored secret is used when omitted). Only the
 * issuer is fetched; `domains` and `enforce` are optional here, and checked as PUT would.
 */
export const testSsoBody = z.strictObject({
  issuer: ssoFields.issuer,
  clientId: ssoFields.clientId.optional(),
  clientSecret: ssoFields.clientSecret.optional(),
  domains: ssoFields.domains.optional(),
  enforce: ssoFields.enforce.optional(),
});

/** The configuration as answered: never the client secret. */
export const ssoConfig = z.object({
  issuer: z.string(),
  clientId: z.string(),
  domains: z.array(z.string()),
  enforce: z.boolean(),
  /** What to register at the identity provider as the redirect (callback) URI: PUBLIC_URL/v1/auth/sso/callback. */
  redirectUri: z.string(),
  /** Where people of this workspace start signing in: PUBLIC_URL/v1/auth/sso/start?workspace=<slug>. */
  loginUrl: z.string(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** Why a connection test failed: a closed list (the message says it in words, without secrets). */
export const SSO_TEST_FAILURES = [
  /** The issuer is not an allowed address (D5) or not an absolute https URL. */
  'issuer_refused',
  /** `<issuer>/.well-known/openid-configuration` did not answer a JSON document in time. */
  'discovery_failed',
  /** The document's `issuer` is not the configured one. */
  'issuer_mismatch',
  /** The document lacks an endpoint, or does not offer the code flow or PKCE S256. */
  'unsupported',
  /** The `jwks_uri` did not answer a key set with at least one key. */
  'jwks_failed',
] as const;

export const testSsoResponse = z.union([
  z.object({
    ok: z.literal(true),
    authorizationEndpoint: z.string(),
    tokenEndpoint: z.string(),
    /** How many keys the issuer's JWKS holds. */
    jwksKeys: z.number().int(),
    redirectUri: z.string(),
  }),
  z.object({
    ok: z.literal(false),
    reason: z.enum(SSO_TEST_FAILURES),
    message: z.string(),
  }),
]);

/**
 * `GET /v1/auth/sso/start`: one of `email` (its domain picks the workspace) or `workspace` (a slug). A
 * browser navigates here; the answer is a 302 to the identity provider, or 404 NOT_FOUND when no workspace
 * signs in this way.
 */
export const ssoStartQuery = z
  .strictObject({
    email: z.string().trim().max(254).optional(),
    workspace: z.string().trim().max(100).optional(),
  })
  .refine((q) => (q.email === undefined) !== (q.workspace === undefined), {
    message: 'give either email or workspace',
    path: ['email'],
  });

/**
 * `GET /v1/auth/sso/callback`: what the identity provider appends. Deliberately loose (any other parameter,
 * a repeated one) so that every answer is a redirect to the dashboard and never a JSON error.
 */
export const ssoCallbackQuery = z.looseObject({
  code: z.unknown().optional(),
  state: z.unknown().optional(),
  error: z.unknown().optional(),
});

/**
 * Why a single sign-on failed, as `PUBLIC_URL/login?sso_error=<reason>`: a closed list, so nothing from the
 * request or the identity provider is ever echoed into the dashboard's address.
 */
export const SSO_ERRORS = [
  /** No state, an unknown one, or one already used. */
  'invalid_state',
  /** The state is older than 10 minutes. */
  'expired',
  /** The identity provider answered with an error (the person cancelled, or was refused there). */
  'idp_error',
  /** The workspace no longer has single sign-on. */
  'not_configured',
  /** The identity provider's discovery document could not be fetched (or names another issuer). */
  'idp_unavailable',
  'token_exchange_failed',
  'invalid_id_token',
  'email_not_verified',
  'domain_not_allowed',
  /** The workspace's plan has no seat left for a new member (D15). */
  'seat_limit',
  /** Anything else (logged with the request id). */
  'server_error',
] as const;
export type SsoError = (typeof SSO_ERRORS)[number];

export type SsoConfig = z.infer<typeof ssoConfig>;
export type TestSsoResponse = z.infer<typeof testSsoResponse>;
