import type { OidcLoginResponse } from '@svcenv/contract';
import { compactVerify, decodeProtectedHeader, errors as jose } from 'jose';
import type { Selectable } from 'kysely';
import type { WorkloadIdentitiesTable } from '../../db/schema.js';
import { sha256Hex } from '../../lib/crypto.js';
import { rateLimited, unauthorized } from '../../lib/errors.js';
import { globMatch } from '../../lib/glob.js';
import { newAccessToken, newId, TOKEN_DISPLAY_PREFIX_LEN } from '../../lib/ids.js';
import { clientKey } from '../../lib/rate-limit.js';
import type { KeyGetter } from '../../runtime/issuer-keys.js';
import { auditRow, recordAudit } from '../core/audit.js';
import { recordChange } from '../core/changes.js';
import { actingAs } from '../core/context.js';
import type { Deps } from '../core/deps.js';
import type { Principal } from '../core/principal.js';
import { requireTrustedAddress } from './authn.js';
import { OIDC_LOGIN_PER_IP_AND_IDENTITY } from './limits.js';

/**
 * D60: `POST /v1/auth/oidc`, a platform's identity token (a JWT) exchanged for a short-lived access token.
 *
 * Only RS256 and ES256 are accepted, decided from the header before any key is touched, so `none` and the HMAC
 * algorithms (an HS256 token "signed" with the issuer's public key as the secret) never reach a verifier. The
 * key comes only from the issuer's JWKS (runtime/issuer-keys.ts); `jwk`, `jku`, `x5u` and `x5c` headers are
 * ignored and never fetched. The signature is checked before any claim, so an unsigned guess learns nothing
 * about the identity's settings, and a refusal names the check, never the expected value.
 */
export const ALGORITHMS = ['RS256', 'ES256'];
/** D60: 60 s of clock difference allowed on exp, nbf and iat. */
export const LEEWAY_S = 60;

class Refused extends Error {
  constructor(
    readonly check: string,
    message: string,
  ) {
    super(message);
  }
}

/** What a login reads of its identity: every rule of the row, not who made it or when. */
type IdentityGrant = Omit<
  Selectable<WorkloadIdentitiesTable>,
  'created_by' | 'created_at' | 'last_login_at' | 'deleted_at'
>;

/** The identity as the audit log's actor (D60: actorType token, actor name `identity:<name>`). */
function identityActor(row: IdentityGrant): Principal {
  const name = `identity:${row.name}`;
  return {
    kind: 'token',
    userId: row.id,
    userName: name,
    workspaceId: row.workspace_id,
    wsRole: 'Owner',
    actorId: row.id,
    actorName: name,
    token: {
      id: row.id,
      name,
      scope: row.scope,
      envs: JSON.parse(row.envs) as string[],
      projectId: row.project_id,
      trustedCidrs: JSON.parse(row.trusted_cidrs) as string[],
      identity: { id: row.id, name: row.name },
    },
  };
}

export async function oidcLogin(
  deps: Deps,
  input: { identity: string; token: string; ip: string },
): Promise<OidcLoginResponse> {
  const limit = await deps.limiter.consume(`${clientKey(input.ip)}|${input.identity}`, OIDC_LOGIN_PER_IP_AND_IDENTITY);
  if (!limit.allowed) {
    throw rateLimited(limit.retryAfterMs, 'too many sign-ins for this identity from this address; try again later');
  }
  const row = await deps.db
    .selectFrom('workload_identities')
    .select([
      'id',
      'workspace_id',
      'name',
      'issuer',
      'audience',
      'subject',
      'claims',
      'scope',
      'project_id',
      'envs',
      'ttl_seconds',
      'trusted_cidrs',
      'updated_at',
    ])
    .where('id', '=', input.identity)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw unauthorized('unknown identity');
  const actor = identityActor(row);
  // D62: an identity bound to networks signs in from them only.
  await requireTrustedAddress(deps, actor, input.ip);

  let sub: string | null;
  try {
    sub = await verifyPlatformJwt(deps, row, input.token);
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    await recordAudit(
      deps.db,
      auditRow(deps.clock, actor, { action: 'identity.login_failed', detail: { name: row.name, check: e.check } }),
    );
    throw unauthorized(e.message);
  }

  const token = newAccessToken();
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + row.ttl_seconds * 1000).toISOString();
  const tokenId = newId();
  await deps.db.transaction().execute(async (trx) => {
    // The identity as it was verified against: changed or deleted meanwhile, nothing is issued (a change
    // committed after this one deletes the token instead).
    const touched = await trx
      .updateTable('workload_identities')
      .set({ last_login_at: now.toISOString() })
      .where('id', '=', row.id)
      .where('updated_at', '=', row.updated_at)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(touched.numUpdatedRows) !== 1) throw unauthorized('the identity changed during sign-in; try again');
    // One row per sign-in; the expired ones of this identity go as new ones come.
    await trx
      .deleteFrom('identity_tokens')
      .where('identity_id', '=', row.id)
      .where('expires_at', '<=', now.toISOString())
      .execute();
    await trx
      .insertInto('identity_tokens')
      .values({
        id: tokenId,
        identity_id: row.id,
        token_prefix: token.slice(0, TOKEN_DISPLAY_PREFIX_LEN),
        token_digest: sha256Hex(token),
        expires_at: expiresAt,
        created_at: now.toISOString(),
      })
      .execute();
    await recordChange(trx, actingAs(deps, actor), {
      action: 'identity.login',
      detail: { name: row.name, sub, tokenId, expiresAt },
    });
  });
  return {
    token,
    expiresAt,
    scope: row.scope,
    envs: JSON.parse(row.envs) as string[],
    projectId: row.project_id,
  };
}

/** The JWT's `sub` once every D60 check passed; else Refused naming the check. */
async function verifyPlatformJwt(deps: Deps, identity: IdentityGrant, token: string): Promise<string | null> {
  let alg: unknown;
  try {
    // Three parts: a JWE (five) or anything else is not a signed JWT.
    if (token.split('.').length !== 3) throw new Error('not a JWS');
    alg = decodeProtectedHeader(token).alg;
  } catch {
    throw new Refused('format', 'token is not a well-formed JWT');
  }
  if (typeof alg !== 'string' || !ALGORITHMS.includes(alg)) {
    throw new Refused('algorithm', 'token algorithm is not accepted (RS256 or ES256 only)');
  }
  let keys: KeyGetter;
  try {
    keys = await deps.issuerKeys.keys(identity.issuer);
  } catch {
    throw new Refused('issuer_keys', "the issuer's signing keys could not be fetched");
  }
  let payload: Uint8Array;
  try {
    payload = (await compactVerify(token, keys, { algorithms: ALGORITHMS })).payload;
  } catch (e) {
    if (!(e instanceof jose.JWKSNoMatchingKey)) throw verifyRefusal(e);
    // A kid the cached keys lack: the issuer may have rotated (one refetch per issuer per 60 s).
    const fresh = await deps.issuerKeys.refetchForUnknownKid(identity.issuer).catch(() => null);
    if (!fresh) throw verifyRefusal(e);
    try {
      payload = (await compactVerify(token, fresh, { algorithms: ALGORITHMS })).payload;
    } catch (e2) {
      throw verifyRefusal(e2);
    }
  }
  let claims: Record<string, unknown>;
  try {
    claims = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload)) as Record<string, unknown>;
    if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) throw new Error('not an object');
  } catch {
    throw new Refused('format', 'token payload is not a JSON object');
  }
  checkClaims(claims, identity, deps.clock.now().getTime() / 1000);
  return typeof claims.sub === 'string' ? claims.sub : null;
}

function verifyRefusal(e: unknown): Refused {
  if (e instanceof jose.JWKSNoMatchingKey) return new Refused('key', 'no signing key of the issuer matches the token');
  if (e instanceof jose.JOSEAlgNotAllowed) {
    return new Refused('algorithm', 'token algorithm is not accepted (RS256 or ES256 only)');
  }
  if (e instanceof jose.JWSInvalid || e instanceof jose.JOSENotSupported) {
    return new Refused('format', 'token is not a well-formed JWT');
  }
  return new Refused('signature', 'token signature does not verify');
}

/** The claim checks of D60, in a fixed order, after the signature verified. */
function checkClaims(claims: Record<string, unknown>, identity: IdentityGrant, nowS: number): void {
  if (claims.iss !== identity.issuer) throw new Refused('issuer', 'issuer does not match');
  const aud = claims.aud;
  const audiences = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
  if (!audiences.includes(identity.audience)) throw new Refused('audience', 'audience does not match');
  if (typeof claims.exp !== 'number') throw new Refused('exp', 'token has no expiry (exp)');
  if (nowS >= claims.exp + LEEWAY_S) throw new Refused('exp', 'token has expired');
  if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf > nowS + LEEWAY_S)) {
    throw new Refused('nbf', 'token is not valid yet (nbf)');
  }
  if (claims.iat !== undefined && (typeof claims.iat !== 'number' || claims.iat > nowS + LEEWAY_S)) {
    throw new Refused('iat', 'token is issued in the future (iat)');
  }
  if (identity.subject !== null && !(typeof claims.sub === 'string' && globMatch(identity.subject, claims.sub))) {
    throw new Refused('subject', 'subject does not match');
  }
  for (const [name, pattern] of Object.entries(JSON.parse(identity.claims) as Record<string, string>)) {
    const value = claims[name];
    if (!(typeof value === 'string' && globMatch(pattern, value))) {
      throw new Refused('claims', `claim "${name}" does not match`);
    }
  }
}
