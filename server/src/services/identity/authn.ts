import { timingSafeEqual } from 'node:crypto';
import { verify as bcryptVerify } from '@node-rs/bcrypt';
import { type CidrRange, cidrContains, parseCidr, parseIp } from '@svcenv/contract';
import { cachedRows, type RowSnapshot, readEpochAfterArrival } from '../../db/epoch-cache.js';
import { sha256Hex } from '../../lib/crypto.js';
import { forbidden, unauthorized } from '../../lib/errors.js';
import { TOKEN_DISPLAY_PREFIX_LEN, TOKEN_PREFIX, tokenChecksumValid } from '../../lib/ids.js';
import { auditRow, recordAudit } from '../core/audit.js';
import { accessRowKeys, type EnvFull, type ProjectRow } from '../core/authz.js';
import type { Authenticated } from '../core/context.js';
import type { AuthnDeps } from '../core/deps.js';
import { liveWsRole, type Principal } from '../core/principal.js';

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

/**
 * The caller behind the Authorization header. `ip` is the client address (http/server.ts: the connection's,
 * or the one X-Forwarded-For gives under TRUST_PROXY/TRUSTED_PROXIES), which a token bound to networks
 * (D62) must come from.
 */
export async function authenticate(
  deps: AuthnDeps,
  header: string | undefined,
  mode: AuthMode,
  ip: string,
  /** The one environment a read-only request (pull, export) reads: its rows are read with the token. */
  wanted?: EnvWanted,
): Promise<Authenticated> {
  const credential = bearer(header);
  if (!credential) throw unauthorized('an Authorization: Bearer credential is required');
  if (credential.startsWith(TOKEN_PREFIX)) {
    if (mode === 'jwt') throw unauthorized('this endpoint requires a dashboard session (JWT), not an access token');
    const authenticated = await authenticateToken(deps, credential, wanted);
    await requireTrustedAddress(deps, authenticated.principal, ip);
    return authenticated;
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
  // D73: a temporary role read with the membership, against the clock: no query more.
  const wsRole = liveWsRole(row.ws_role, row.expires_at, deps.clock.now());
  if (!wsRole) throw unauthorized('your temporary workspace membership has ended');
  return {
    kind: 'user',
    userId: row.id,
    userName: row.name,
    workspaceId: wid,
    wsRole,
    actorId: row.id,
    actorName: row.name,
    token: null,
  };
}

/** A project, by its id or (D58) its slug, and one of its environments (by name). */
export interface EnvWanted {
  project: string;
  by: 'id' | 'slug';
  env: string;
}

async function authenticateToken(deps: AuthnDeps, token: string, wanted?: EnvWanted): Promise<Authenticated> {
  // D33: a malformed or mistyped token is refused before any database or bcrypt work.
  if (!tokenChecksumValid(token)) throw unauthorized('invalid access token');
  const digest = sha256Hex(token);
  const prefix = token.slice(0, TOKEN_DISPLAY_PREFIX_LEN);
  // D33: revocation and expiry as of a counter read made after this request arrived (SQLite; PostgreSQL has
  // no counter and does not wait for one).
  const counterRead = readEpochAfterArrival(deps.db);
  const epoch = counterRead && (await counterRead);
  // Where the epoch cache serves the rows (SQLite) they cost one counter read; elsewhere a pull's token,
  // project, environment and role are read in one query instead of four (ADR 0007).
  const grantQuery = wanted?.by === 'slug' ? deps.queries.tokensWithGrantBySlug : deps.queries.tokensWithGrant;
  const grant = wanted && epoch === undefined ? await grantQuery(prefix, wanted.project, wanted.env) : null;
  const rows =
    grant ?? (await cachedRows(deps.db, `token|${prefix}`, () => deps.queries.tokensByPrefix(prefix), epoch));
  const tried = new Set<string>();
  for (const row of rows) {
    // tokensWithGrant answers one row per override of the token's creator: each token is checked once.
    if (tried.has(row.id)) continue;
    tried.add(row.id);
    if (!deps.tokenCache.has(row.id, digest)) {
      if (!(await bcryptVerify(digest, row.token_hash))) continue;
      deps.tokenCache.add(row.id, digest);
    }
    if (row.revoked_at) throw unauthorized('this access token was revoked');
    const now = deps.clock.now();
    if (row.expires_at && row.expires_at <= now.toISOString()) throw unauthorized('this access token has expired');
    // D32: a creator removed from the workspace leaves the token with no access.
    // D73: a temporary role of the creator as it stands now (an expired Owner is a Member again).
    const wsRole = row.ws_role ? liveWsRole(row.ws_role, row.ws_expires_at, now) : null;
    if (!wsRole) throw unauthorized('the creator of this access token is no longer a workspace member');
    touchToken(deps, row.id, row.last_used_at);
    const principal: Principal = {
      kind: 'token',
      userId: row.user_id,
      userName: row.user_name,
      workspaceId: row.workspace_id,
      wsRole,
      actorId: row.id,
      actorName: `token:${row.name}`,
      token: {
        id: row.id,
        name: row.name,
        scope: row.scope,
        envs: JSON.parse(row.envs) as string[],
        projectId: row.project_id,
        trustedCidrs: row.trusted_cidrs ? (JSON.parse(row.trusted_cidrs) as string[]) : [],
        identity: null,
      },
    };
    const snapshot =
      grant && wanted
        ? grantSnapshot(
            principal,
            wanted,
            grant.filter((r) => r.id === row.id),
          )
        : undefined;
    return { principal, epoch, snapshot };
  }
  return authenticateIdentityToken(deps, digest, prefix, epoch);
}

type GrantRow = Awaited<ReturnType<AuthnDeps['queries']['tokensWithGrant']>>[number];

/**
 * The rows authorizeEnv reads for `wanted`, from the token's tokensWithGrant rows, under the keys it reads
 * them by (services/core/authz.ts), and for a slug the project id it stands for, under the key the slug is
 * looked up by (services/projects/project-ref.ts). A project not in the token's workspace leaves the snapshot
 * empty: the usual reads then answer 404 as for any caller.
 */
function grantSnapshot(principal: Principal, wanted: EnvWanted, rows: GrantRow[]): RowSnapshot {
  const snapshot = new Map<string, readonly unknown[]>();
  const r = rows[0];
  if (!r?.p_id) return snapshot;
  const project: ProjectRow = {
    id: r.p_id,
    workspace_id: r.p_workspace_id!,
    name: r.p_name!,
    slug: r.p_slug!,
    description: r.p_description,
    color: r.p_color!,
    wrapped_key: r.p_wrapped_key!,
    created_at: r.p_created_at!,
    updated_at: r.p_updated_at!,
  };
  const env: EnvFull | null = r.e_id
    ? {
        id: r.e_id,
        project_id: r.e_project_id!,
        name: r.e_name!,
        protected: r.e_protected!,
        color: r.e_color!,
        position: r.e_position!,
        revision: r.e_revision!,
        require_approval: r.e_require_approval!,
        override_rev: r.e_override_rev!,
      }
    : null;
  const overrides = rows
    .filter((o) => o.o_environment_id !== null)
    .map((o) => ({ environment_id: o.o_environment_id!, permission: o.o_permission!, expires_at: o.o_expires_at }));
  if (wanted.by === 'slug') snapshot.set(accessRowKeys.slug(principal.workspaceId, wanted.project), [{ id: r.p_id }]);
  snapshot.set(accessRowKeys.project(r.p_id, principal.workspaceId), [project]);
  snapshot.set(
    accessRowKeys.member(r.p_id, principal.userId),
    r.member_role ? [{ role: r.member_role, expires_at: r.member_expires_at }] : [],
  );
  snapshot.set(accessRowKeys.overrides(r.p_id, principal.userId), overrides);
  snapshot.set(accessRowKeys.env(r.p_id, wanted.env), env ? [env] : []);
  return snapshot;
}

/**
 * D60: a token issued to a workload identity. Its access is the identity's grant as it stands now (scope,
 * project, environments), not bounded by any person's permissions: the identity belongs to the workspace.
 * An updated or deleted identity has no tokens left (services/identity/identities.ts), so the row lookup
 * itself refuses them, on every instance (per-request reads, or the SQLite epoch cache).
 */
async function authenticateIdentityToken(
  deps: AuthnDeps,
  digest: string,
  prefix: string,
  epoch: number | undefined,
): Promise<Authenticated> {
  const rows = await cachedRows(
    deps.db,
    `identity-token|${prefix}`,
    () => deps.queries.identityTokensByPrefix(prefix),
    epoch,
  );
  const presented = Buffer.from(digest, 'hex');
  for (const row of rows) {
    // A 190-bit random token: its SHA-256, compared in constant time, is all the stored secret needs.
    const stored = Buffer.from(row.token_digest, 'hex');
    if (stored.length !== presented.length || !timingSafeEqual(stored, presented)) continue;
    if (row.expires_at <= deps.clock.now().toISOString()) throw unauthorized('this access token has expired');
    const name = `identity:${row.name}`;
    const principal: Principal = {
      kind: 'token',
      userId: row.identity_id,
      userName: name,
      workspaceId: row.workspace_id,
      wsRole: 'Owner',
      actorId: row.identity_id,
      actorName: name,
      token: {
        id: row.id,
        name,
        scope: row.scope,
        envs: JSON.parse(row.envs) as string[],
        projectId: row.project_id,
        trustedCidrs: JSON.parse(row.trusted_cidrs) as string[],
        identity: { id: row.identity_id, name: row.name },
      },
    };
    return { principal, epoch };
  }
  throw unauthorized('invalid access token');
}

const parsedRanges = new Map<string, CidrRange[]>();

/** D62: whether `ip` lies in one of `cidrs` (empty: anywhere). Lists are parsed once per process. */
export function addressAllowed(cidrs: readonly string[], ip: string): boolean {
  if (cidrs.length === 0) return true;
  const address = parseIp(ip);
  if (!address) return false;
  const key = cidrs.join(',');
  let ranges = parsedRanges.get(key);
  if (!ranges) {
    ranges = cidrs.map(parseCidr).filter((r): r is CidrRange => r !== null);
    if (parsedRanges.size >= 10_000) parsedRanges.clear();
    parsedRanges.set(key, ranges);
  }
  return ranges.some((r) => cidrContains(r, address));
}

export const DENIED_ADDRESS = 'token not allowed from this address';

/**
 * D62: a token (or an identity, D60) bound to networks, used from elsewhere: 403, audited
 * `token.denied_address` with the address, and nothing else happens.
 */
export async function requireTrustedAddress(
  deps: Pick<AuthnDeps, 'db' | 'clock'>,
  principal: Principal,
  ip: string,
  cidrs: readonly string[] = principal.token?.trustedCidrs ?? [],
): Promise<void> {
  if (addressAllowed(cidrs, ip)) return;
  await recordAudit(
    deps.db,
    auditRow(deps.clock, principal, { action: 'token.denied_address', detail: { address: ip } }),
  );
  throw forbidden(DENIED_ADDRESS);
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
