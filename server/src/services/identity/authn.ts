import { verify as bcryptVerify } from '@node-rs/bcrypt';
import { cachedRows, readEpoch } from '../../db/epoch-cache.js';
import { sha256Hex } from '../../lib/crypto.js';
import { unauthorized } from '../../lib/errors.js';
import { TOKEN_DISPLAY_PREFIX_LEN, TOKEN_PREFIX, tokenChecksumValid } from '../../lib/ids.js';
import type { Authenticated } from '../core/context.js';
import type { AuthnDeps } from '../core/deps.js';
import type { Principal } from '../core/principal.js';

/** Which credentials a route accepts (spec "Authentication", D10). */
export type AuthMode = 'none' | 'jwt' | 'token' | 'any';

export const JWT_LIFETIME_S = 7 * 24 * 60 * 60;

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
  // added again does not get the sessions of their first membership back. Every session lives
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
    touchToken(deps, row.id, row.last_used_at);
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

/**
 * D33: lastUsedAt may lag by up to a minute, so a busy token costs one write a minute, not one a request. The
 * write is not awaited (the request does not wait for it); a failed one is tried again on the next use.
 */
function touchToken(deps: AuthnDeps, id: string, lastUsedAt: string | null): void {
  const now = deps.clock.now().getTime();
  const last = Math.max(deps.lastTouch.get(id) ?? 0, lastUsedAt ? Date.parse(lastUsedAt) : 0);
  if (now - last < 60_000) return;
  deps.lastTouch.set(id, now);
  deps.db
    .updateTable('access_tokens')
    .set({ last_used_at: new Date(now).toISOString() })
    .where('id', '=', id)
    .execute()
    .catch(() => deps.lastTouch.delete(id));
}
