import { createSigner, createVerifier } from 'fast-jwt';
import { coalescedHotQuery, hotQuery } from '../db/hot-query.js';
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

/** An access token's row with its creator and the creator's workspace role: what authentication checks. */
function tokenRows(db: Db) {
  return db
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
      'm.expires_at as ws_expires_at',
    ]);
}

/** tokenRows with the grant of one project (by id or slug, in the token's workspace) and one environment. */
function grantRows(db: Db, projectBy: 'p.id' | 'p.slug', project: string, env: string) {
  return tokenRows(db)
    .leftJoin('projects as p', (j) => j.on(projectBy, '=', project).onRef('p.workspace_id', '=', 't.workspace_id'))
    .leftJoin('environments as e', (j) => j.onRef('e.project_id', '=', 'p.id').on('e.name', '=', env))
    .leftJoin('project_members as pm', (j) =>
      j.onRef('pm.project_id', '=', 'p.id').onRef('pm.user_id', '=', 't.created_by'),
    )
    .leftJoin('env_permissions as o', (j) =>
      j.onRef('o.project_id', '=', 'p.id').onRef('o.user_id', '=', 't.created_by'),
    )
    .select([
      'p.id as p_id',
      'p.workspace_id as p_workspace_id',
      'p.name as p_name',
      'p.slug as p_slug',
      'p.description as p_description',
      'p.color as p_color',
      'p.wrapped_key as p_wrapped_key',
      'p.created_at as p_created_at',
      'p.updated_at as p_updated_at',
      'e.id as e_id',
      'e.project_id as e_project_id',
      'e.name as e_name',
      'e.protected as e_protected',
      'e.color as e_color',
      'e.position as e_position',
      'e.revision as e_revision',
      'e.require_approval as e_require_approval',
      'e.override_rev as e_override_rev',
      'pm.role as member_role',
      'pm.expires_at as member_expires_at',
      'o.environment_id as o_environment_id',
      'o.permission as o_permission',
      'o.expires_at as o_expires_at',
    ]);
}

/** The queries every authenticated request runs, compiled once (db/hot-query.ts). */
export function authnQueries(db: Db) {
  return {
    sessionMember: hotQuery(db, 2, (userId: string, workspaceId: string) =>
      db
        .selectFrom('users as u')
        .innerJoin('workspace_members as m', 'm.user_id', 'u.id')
        .select(['u.id', 'u.name', 'u.session_version', 'm.ws_role', 'm.joined_at', 'm.expires_at'])
        .where('u.id', '=', userId)
        .where('m.workspace_id', '=', workspaceId),
    ),
    tokensByPrefix: hotQuery(db, 1, (prefix: string) => tokenRows(db).where('t.token_prefix', '=', prefix)),
    /**
     * A pull's or an export's whole authorization in one read, where no epoch cache serves the rows
     * (PostgreSQL): tokensByPrefix's columns, and beside them the project (in the token's workspace), the
     * environment, the creator's role in the project and their per-environment overrides, one row per
     * override (services/identity/authn.ts, ADR 0007). The project by its id, or (D58) by its slug. Pulls
     * that arrive together share one query (db/hot-query.ts coalescedHotQuery).
     */
    tokensWithGrant: coalescedHotQuery(db, 3, (prefix: string, projectId: string, env: string) =>
      grantRows(db, 'p.id', projectId, env).where('t.token_prefix', '=', prefix),
    ),
    tokensWithGrantBySlug: coalescedHotQuery(db, 3, (prefix: string, slug: string, env: string) =>
      grantRows(db, 'p.slug', slug, env).where('t.token_prefix', '=', prefix),
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
