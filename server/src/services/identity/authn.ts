import { verify as bcryptVerify } from '@node-rs/bcrypt';
import { createSigner, createVerifier } from 'fast-jwt';
import { cachedRows, readEpoch } from '../../db/epoch-cache.js';
import { hotQuery } from '../../db/hot-query.js';
import type { Db } from '../../db/index.js';
import type { Clock } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { unauthorized } from '../../lib/errors.js';
import { TOKEN_DISPLAY_PREFIX_LEN, TOKEN_PREFIX, tokenChecksumValid } from '../../lib/ids.js';
import type { Authenticated } from '../core/context.js';
import type { Principal } from '../core/principal.js';

/** Which credentials a route accepts (spec "Authentication", D10). */
export type AuthMode = 'none' | 'jwt' | 'token' | 'any';

export const JWT_LIFETIME_S = 7 * 24 * 60 * 60;
const ISSUER = 'svcenv';

export interface AuthnDeps {
  db: Db;
  clock: Clock;
  jwt: JwtCodec;
  queries: AuthnQueries;
  tokenCache: VerifiedTokenCache;
  /** Records lastUsedAt out of band; may lag by up to a minute (D33). */
  touchToken(id: string, lastUsedAt: string | null): void;
}

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

export async function signSessionJwt(
  deps: Pick<AuthnDeps, 'jwt' | 'clock'>,
  claims: { userId: string; workspaceId: string; sessionVersion: number },
): Promise<string> {
  return deps.jwt.issue(
    { sub: claims.userId, wid: claims.workspaceId, sv: claims.sessionVersion, typ: 'session' },
    deps.clock.now(),
    JWT_LIFETIME_S,
  );
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
          'u.id as user_id',
          'u.name as user_name',
          'm.ws_role',
        ])
        .where('t.token_prefix', '=', prefix),
    ),
  };
}
export type AuthnQueries = ReturnType<typeof authnQueries>;

export function bearer(header: string | undefined): string | null {
  if (!header) return null;
  // RFC 9110 11.1: the scheme name is case-insensitive.
  const m = /^Bearer ([^\s]+)$/i.exec(header);
  return m ? m[1]! : null;
}

export async function authenticate(
  deps: AuthnDeps,
  header: string | undefined,
  mode: AuthMode,
): Promise<Authenticated> {
  const credential = bearer(header);
  if (!credential) throw unauthorized('an Authorization: Bearer credential is required');
  if (credential.startsWith(TOKEN_PREFIX)) {
    if (mode === 'jwt') throw unauthorized('this endpoint requires a dashboard session (JWT), not an access token');
    return authenticateToken(deps, credential);
  }
  if (mode === 'token') throw unauthorized('this endpoint requires an access token (tok_live_...), not a session');
  return { principal: await authenticateJwt(deps, credential), epoch: undefined };
}

async function authenticateJwt(deps: AuthnDeps, jwt: string): Promise<Principal> {
  const payload = deps.jwt.check(jwt, deps.clock.now());
  if (!payload) throw unauthorized('invalid or expired session');
  const { sub, wid, sv, typ, exp } = payload;
  if (typ !== 'session' || typeof sub !== 'string' || typeof wid !== 'string' || typeof sv !== 'number') {
    throw unauthorized('invalid session');
  }
  // D9: roles and the session version come from the database on every request, never from the token.
  const [row] = await cachedRows(deps.db, `session|${sub}|${wid}`, () => deps.queries.sessionMember(sub, wid));
  if (!row || row.session_version !== sv) throw unauthorized('invalid or expired session');
  // A session issued before the current membership began belongs to an earlier one: a member removed and
  // added again does not get the sessions of their first membership back (issue 17). Every session lives
  // JWT_LIFETIME_S, so its expiry tells when it was issued (the signer adds no `iat`); whole seconds: a
  // session issued in the second the member joined is theirs.
  const issuedAt = (exp as number) - JWT_LIFETIME_S;
  if (issuedAt < Math.floor(Date.parse(row.joined_at) / 1000)) throw unauthorized('invalid or expired session');
  return {
    kind: 'user',
    userId: row.id,
    userName: row.name,
    workspaceId: wid,
    wsRole: row.ws_role,
    actorId: row.id,
    actorName: row.name,
    token: null,
  };
}

async function authenticateToken(deps: AuthnDeps, token: string): Promise<Authenticated> {
  // D33: a malformed or mistyped token is refused before any database or bcrypt work.
  if (!tokenChecksumValid(token)) throw unauthorized('invalid access token');
  const digest = sha256Hex(token);
  const prefix = token.slice(0, TOKEN_DISPLAY_PREFIX_LEN);
  const epoch = readEpoch(deps.db);
  const rows = await cachedRows(deps.db, `token|${prefix}`, () => deps.queries.tokensByPrefix(prefix), epoch);
  for (const row of rows) {
    if (!deps.tokenCache.has(row.id, digest)) {
      if (!(await bcryptVerify(digest, row.token_hash))) continue;
      deps.tokenCache.add(row.id, digest);
    }
    if (row.revoked_at) throw unauthorized('this access token was revoked');
    const now = deps.clock.now();
    if (row.expires_at && row.expires_at <= now.toISOString()) throw unauthorized('this access token has expired');
    // D32: a creator removed from the workspace leaves the token with no access.
    if (!row.ws_role) throw unauthorized('the creator of this access token is no longer a workspace member');
    deps.touchToken(row.id, row.last_used_at);
    const principal: Principal = {
      kind: 'token',
      userId: row.user_id,
      userName: row.user_name,
      workspaceId: row.workspace_id,
      wsRole: row.ws_role,
      actorId: row.id,
      actorName: `token:${row.name}`,
      token: {
        id: row.id,
        name: row.name,
        scope: row.scope,
        envs: JSON.parse(row.envs) as string[],
        projectId: row.project_id,
      },
    };
    return { principal, epoch };
  }
  throw unauthorized('invalid access token');
}
