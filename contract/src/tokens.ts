import { z } from 'zod';
import { envName, timestamp, uuid } from './common.js';
import { trustedCidrs } from './identities.js';

export const tokenScope = z.enum(['read', 'write', 'deploy']);
/** D31: `expiresIn` is 30, 90 or 365 days; omitted or null means no expiry. */
export const TOKEN_EXPIRY_DAYS = [30, 90, 365] as const;

export const createTokenBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  scope: tokenScope.default('read'),
  envs: z
    .array(z.union([z.literal('*'), envName]))
    .min(1)
    .max(100),
  projectId: uuid.nullable().optional(),
  expiresIn: z
    .union([z.literal(30), z.literal(90), z.literal(365)])
    .nullable()
    .optional(),
  /** D62: where the token may be used from; absent or empty: anywhere. */
  trustedCidrs: trustedCidrs.optional(),
});
export const accessToken = z.object({
  id: uuid,
  name: z.string(),
  tokenPrefix: z.string(),
  scope: tokenScope,
  envs: z.array(z.string()),
  projectId: uuid.nullable(),
  lastUsedAt: timestamp.nullable(),
  expiresAt: timestamp.nullable(),
  createdAt: timestamp,
  trustedCidrs: z.array(z.string()),
});
export const listTokensResponse = z.object({ tokens: z.array(accessToken) });
export const createTokenResponse = z.object({
  id: uuid,
  token: z.string(),
  name: z.string(),
  scope: tokenScope,
  envs: z.array(z.string()),
  projectId: uuid.nullable(),
  expiresAt: timestamp.nullable(),
  trustedCidrs: z.array(z.string()),
});
export const rotateTokenResponse = z.object({
  id: uuid,
  token: z.string(),
  name: z.string(),
  scope: tokenScope,
  envs: z.array(z.string()),
  trustedCidrs: z.array(z.string()),
});
export const tokenParams = z.strictObject({ id: uuid });
/**
 * D58: `GET /v1/auth/token`, an access token describing itself (for `svcenv whoami`): never the token,
 * only what the dashboard's token list shows of it.
 */
export const tokenSelfResponse = accessToken
  .pick({
    id: true,
    name: true,
    tokenPrefix: true,
    scope: true,
    envs: true,
    projectId: true,
    expiresAt: true,
    trustedCidrs: true,
  })
  .extend({
    /** D60: present when the token was issued to a workload identity (its name is then `identity:<name>`). */
    identity: z.object({ id: uuid, name: z.string() }).optional(),
  });

export type AccessToken = z.infer<typeof accessToken>;
export type TokenSelf = z.infer<typeof tokenSelfResponse>;
