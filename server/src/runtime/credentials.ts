import { createSigner, createVerifier } from 'fast-jwt';
import { hotQuery } from '../db/hot-query.js';
import type { Db } from '../db/index.js';

/**
 * What authentication keeps per process (services/identity/authn.ts uses it): the session JWT codec, the
 * access tokens already verified, and the queries every authenticated request runs, compiled once.
 */

const ISSUER = 'svcenv';

/**
 * D33: bcrypt runs at most once per distinct valid token per process. The cache maps a token id to the
 * SHA-256 digest that verified against its stored hash; revocation and expiry are still read from the
 * database on every request. Bounded, oldest entries evicted first.
 */
export class VerifiedTokenCache {
  private readonly map = new Map<string, string>();
  constructor(private readonly max = 10_000) {}
  has(tokenId: string, digest: string): boolean {
    return this.map.get(tokenId) === digest;
  }
  add(tokenId: string, digest: string): void {
    if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as string);
    this.map.set(tokenId, digest);
  }
}

/**
 * D9: HS256 only, with a key derived from the master key. fast-jwt verifies the signature, algorithm and
 * issuer synchronously; expiry is checked here against the injected clock.
 */
export class JwtCodec {
  private readonly sign: (payload: Record<string, unknown>) => string;
  private readonly verify: (token: string) => Record<string, unknown>;
  constructor(key: Buffer) {
    this.sign = createSigner({ key, algorithm: 'HS256', noTimestamp: true }) as (p: Record<string, unknown>) => string;
    this.verify = createVerifier({
      key,
      algorithms: ['HS256'],
      allowedIss: ISSUER,
      ignoreExpiration: true,
      requiredClaims: ['sub', 'exp', 'iss'],
    }) as (t: string) => Record<string, unknown>;
  }
  issue(claims: Record<string, unknown>, now: Date, lifetimeS: number): string {
    const iat = Math.floor(now.getTime() / 1000);
    return this.sign({ ...claims, iss: ISSUER, iat, exp: iat + lifetimeS });
  }
  /** The payload of a valid, unexpired token, or null. */
  check(token: string, now: Date): Record<string, unknown> | null {
    try {
      const payload = this.verify(token);
      return typeof payload.exp === 'number' && payload.exp * 1000 > now.getTime() ? payload : null;
    } catch {
      return null;
    }
  }
}

/** The queries every authenticated request runs, compiled once (db/hot-query.ts). */
export function authnQueries(db: Db) {
  return {
    sessionMember: hotQuery(db, 2, (userId: string, workspaceId: string) =>
      db
        .selectFrom('users as u')
        .innerJoin('workspace_members as m', 'm.user_id', 'u.id')
        .select(['u.id', 'u.name', 'u.session_version', 'm.ws_role', 'm.joined_at'])
        .where('u.id', '=', userId)
        .where('m.workspace_id', '=', workspaceId),
    ),
    tokensByPrefix: hotQuery(db, 1, (prefix: string) =>
      db
        .selectFrom('access_tokens as t')
        .innerJoin('users as u', 'u.id', 't.created_by')
        .leftJoin('workspace_members as m', (j) =>
          j.onRef('m.workspace_id', '=', 't.workspace_id').onRef('m.user_id', '=', 't.created_by'),
        )
        .select([
          't.id',
          't.name',
          't.token_hash',
          't.scope',
          't.envs',
          't.project_id',
          't.workspace_id',
          't.expires_at',
          't.revoked_at',
          't.last_used_at',
          't.trusted_cidrs',
          'u.id as user_id',
          'u.name as user_name',
          'm.ws_role',
        ])
        .where('t.token_prefix', '=', prefix),
    ),
    /** D60: tokens issued to workload identities, with the identity's current grant (deleted: no row). */
    identityTokensByPrefix: hotQuery(db, 1, (prefix: string) =>
      db
        .selectFrom('identity_tokens as t')
        .innerJoin('workload_identities as i', 'i.id', 't.identity_id')
        .select([
          't.id',
          't.token_digest',
          't.expires_at',
          'i.id as identity_id',
          'i.name',
          'i.workspace_id',
          'i.scope',
          'i.envs',
          'i.project_id',
          'i.trusted_cidrs',
        ])
        .where('t.token_prefix', '=', prefix)
        .where('i.deleted_at', 'is', null),
    ),
  };
}
export type AuthnQueries = ReturnType<typeof authnQueries>;
