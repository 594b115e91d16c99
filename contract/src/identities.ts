import { z } from 'zod';
import { MAX_TRUSTED_CIDRS, parseCidr } from './cidr.js';
import { envName, projectRef, timestamp, uuid } from './common.js';
import { IDENTITY_TTL } from './constants.js';

/**
 * D62: up to 20 IPv4 or IPv6 addresses or CIDR ranges; empty means anywhere. Checked as a whole, so that a
 * bad entry is reported with `field: trustedCidrs`, without echoing the entry.
 */
export const trustedCidrs = z
  .array(z.string().trim().max(64))
  .max(MAX_TRUSTED_CIDRS, `at most ${MAX_TRUSTED_CIDRS} entries`)
  .superRefine((list, ctx) => {
    const bad = list.findIndex((c) => parseCidr(c) === null);
    if (bad >= 0) {
      ctx.addIssue({ code: 'custom', message: `entry ${bad + 1} is not an IPv4 or IPv6 address or CIDR range` });
    }
  });

/** D31: environment names, or ["*"] alone for every environment (the server refuses "*" among names). */
export const grantEnvs = z
  .array(z.union([z.literal('*'), envName]))
  .min(1)
  .max(100);

/** D60: a `*` pattern (any run of characters) matched against a claim's string value. */
const pattern = z.string().min(1).max(512);
const claimName = z.string().regex(/^[A-Za-z0-9_.:/-]{1,128}$/, 'claim names are 1-128 letters, digits or . _ : / -');

export const identityScope = z.enum(['read', 'write']);

const identityFields = {
  name: z.string().trim().min(1).max(64),
  /** An absolute https URL; the address rules (D5) are the server's. */
  issuer: z.string().trim().min(1).max(2048),
  audience: z.string().min(1).max(512),
  subject: pattern.nullable(),
  claims: z.record(claimName, pattern).refine((c) => Object.keys(c).length <= 20, 'at most 20 claims'),
  scope: identityScope,
  /** null: every project of the workspace; an id or a slug (D58). */
  projectId: projectRef.nullable(),
  envs: grantEnvs,
  ttlSeconds: z.number().int().min(IDENTITY_TTL.min).max(IDENTITY_TTL.max),
  trustedCidrs,
};

export const createIdentityBody = z.strictObject({
  name: identityFields.name,
  issuer: identityFields.issuer,
  audience: identityFields.audience,
  subject: identityFields.subject.optional(),
  claims: identityFields.claims.optional(),
  scope: identityFields.scope.default('read'),
  projectId: identityFields.projectId.optional(),
  envs: identityFields.envs,
  ttlSeconds: identityFields.ttlSeconds.default(IDENTITY_TTL.default),
  trustedCidrs: identityFields.trustedCidrs.optional(),
});
export const updateIdentityBody = z.strictObject({
  name: identityFields.name.optional(),
  issuer: identityFields.issuer.optional(),
  audience: identityFields.audience.optional(),
  subject: identityFields.subject.optional(),
  claims: identityFields.claims.optional(),
  scope: identityFields.scope.optional(),
  projectId: identityFields.projectId.optional(),
  envs: identityFields.envs.optional(),
  ttlSeconds: identityFields.ttlSeconds.optional(),
  trustedCidrs: identityFields.trustedCidrs.optional(),
});
export const identityParams = z.strictObject({ id: uuid });

export const identity = z.object({
  id: uuid,
  name: z.string(),
  issuer: z.string(),
  audience: z.string(),
  subject: z.string().nullable(),
  claims: z.record(z.string(), z.string()),
  scope: identityScope,
  projectId: uuid.nullable(),
  envs: z.array(z.string()),
  ttlSeconds: z.number().int(),
  trustedCidrs: z.array(z.string()),
  createdAt: timestamp,
  lastLoginAt: timestamp.nullable(),
});
export const listIdentitiesResponse = z.object({ identities: z.array(identity) });

/** The longest platform JWT accepted (GitHub's and Kubernetes' are 1-2 KB). */
export const MAX_OIDC_TOKEN_LENGTH = 16_384;
export const oidcLoginBody = z.strictObject({
  identity: uuid,
  token: z.string().min(1).max(MAX_OIDC_TOKEN_LENGTH),
});
export const oidcLoginResponse = z.object({
  token: z.string(),
  expiresAt: timestamp,
  scope: identityScope,
  envs: z.array(z.string()),
  projectId: uuid.nullable(),
});

export type Identity = z.infer<typeof identity>;
export type OidcLoginResponse = z.infer<typeof oidcLoginResponse>;
