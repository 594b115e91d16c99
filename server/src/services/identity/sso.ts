import { createHash, randomBytes } from 'node:crypto';
import type { SsoConfig, SsoError, TestSsoResponse } from '@svcenv/contract';
import { type JWTPayload, errors as jose, jwtVerify } from 'jose';
import type { Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { WorkspaceSsoTable } from '../../db/schema.js';
import { open, seal, sha256Hex } from '../../lib/crypto.js';
import { AppError, isUniqueViolation, notFound, rateLimited, validation } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { checkTargetUrl } from '../../lib/net-guard.js';
import { clientKey, type LimitRule } from '../../lib/rate-limit.js';
import type { KeyGetter } from '../../runtime/issuer-keys.js';
import { type DiscoveryDocument, DiscoveryFailed } from '../../runtime/oidc-discovery.js';
import { auditRow, recordAudit } from '../core/audit.js';
import { requireOwner, requireUser } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import { actingAs, type Ctx } from '../core/context.js';
import type { Deps } from '../core/deps.js';
import { userActor } from '../core/principal.js';
import { checkLimit, isInstanceAdmin } from '../workspace/instance-policy.js';
import { rememberWorkspace, seatsInUse } from '../workspace/team.js';
import { signSessionJwt } from './authn.js';
import { emailDomain, NO_PASSWORD_HASH } from './sso-policy.js';

/**
 * D63: single sign-on for people, OpenID Connect's code flow with PKCE (ADR 0025).
 *
 * The settings are an Owner's (one configuration per workspace, the client secret sealed and never answered).
 * A sign-in is two browser navigations: `start` writes the flow to the database (state hashed, verifier
 * sealed, bound to the browser by a cookie) and redirects to the provider; `callback` takes the flow out of
 * the database in one statement (single use, on whichever instance the browser reaches), exchanges the code,
 * verifies the ID token and signs the person in to the SSO workspace. Every callback failure is a redirect to
 * the dashboard with a reason from a closed list, never anything the request carried.
 */

/** D63: a flow is good for 10 minutes. */
export const SSO_FLOW_TTL_MS = 10 * 60_000;
/** The browser-binding cookie of the flows a browser started (ADR 0025: no login CSRF). */
export const SSO_BROWSER_COOKIE = 'svcenv_sso';
/** Starts write a row each and reach the provider: bounded per client address. */
export const SSO_START_PER_IP: LimitRule = { name: 'sso-start-ip', max: 30, windowMs: 60_000 };
/** The connection test fetches from the network: bounded per workspace, like the other outbound routes. */
export const SSO_TEST_PER_WORKSPACE: LimitRule = { name: 'sso-test', max: 10, windowMs: 60_000 };
/** ID token algorithms: asymmetric only (an HMAC token would be keyed with the client secret). */
const ID_TOKEN_ALGORITHMS = ['RS256', 'ES256', 'PS256', 'EdDSA'];
const LEEWAY_S = 60;

type SsoRow = Selectable<WorkspaceSsoTable>;

const redirectUri = (deps: Pick<Deps, 'config'>) => `${deps.config.publicUrl}/v1/auth/sso/callback`;
const secretAad = (workspaceId: string) => `svcenv/sso-client-secret/${workspaceId}`;
const verifierAad = (stateHash: string) => `svcenv/sso-code-verifier/${stateHash}`;
const random = () => randomBytes(32).toString('base64url');

function requireSsoAdmin(ctx: Ctx): void {
  requireUser(ctx.principal);
  requireOwner(ctx.principal);
}

async function present(deps: Deps, row: SsoRow): Promise<SsoConfig> {
  const domains = await deps.db
    .selectFrom('sso_domains')
    .select('domain')
    .where('workspace_id', '=', row.workspace_id)
    .orderBy('domain')
    .execute();
  const ws = await deps.db
    .selectFrom('workspaces')
    .select('slug')
    .where('id', '=', row.workspace_id)
    .executeTakeFirstOrThrow();
  return {
    issuer: row.issuer,
    clientId: row.client_id,
    domains: domains.map((d) => d.domain),
    enforce: row.enforce === 1,
    redirectUri: redirectUri(deps),
    loginUrl: `${deps.config.publicUrl}/v1/auth/sso/start?workspace=${encodeURIComponent(ws.slug)}`,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function ssoRow(db: Db, workspaceId: string) {
  return db.selectFrom('workspace_sso').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
}

/**
 * D60's issuer rules (D5 addresses; an absolute https URL, http only with WEBHOOK_ALLOW_PRIVATE), kept as
 * written: the ID token's `iss` must equal it to the character.
 */
async function checkIssuer(deps: Pick<Deps, 'webhooks'>, raw: string): Promise<string> {
  const url = await checkTargetUrl(raw, 'issuer', deps.webhooks);
  if (url.search || url.hash || raw.includes('#') || raw.includes('?')) {
    throw validation('issuer', 'issuer must not contain a query or a fragment');
  }
  return raw;
}

const claimedElsewhere = (domain: string) =>
  new AppError('CONFLICT', `the domain ${domain} is claimed by another workspace`, 'domains');

export async function getSso(ctx: Ctx): Promise<SsoConfig> {
  requireSsoAdmin(ctx);
  const row = await ssoRow(ctx.deps.db, ctx.principal.workspaceId);
  if (!row) throw notFound('single sign-on configuration');
  return present(ctx.deps, row);
}

export interface SsoInput {
  issuer: string;
  clientId: string;
  clientSecret?: string | undefined;
  domains: string[];
  enforce: boolean;
}

/**
 * ADR 0025: a domain this workspace does not claim yet may be claimed by an Owner whose own verified address is
 * in it, or by an instance administrator (D69). Without that, any Owner could claim another company's domain,
 * point it at a provider they run, and sign in as that company's people.
 */
async function checkNewDomains(ctx: Ctx, domains: string[]): Promise<void> {
  const { deps, principal } = ctx;
  const held = await deps.db
    .selectFrom('sso_domains')
    .select('domain')
    .where('workspace_id', '=', principal.workspaceId)
    .execute();
  const fresh = domains.filter((d) => !held.some((h) => h.domain === d));
  if (fresh.length === 0) return;
  const me = await deps.db
    .selectFrom('users')
    .select(['email', 'email_verified_at'])
    .where('id', '=', principal.userId)
    .executeTakeFirstOrThrow();
  const own = me.email_verified_at !== null ? emailDomain(me.email) : null;
  const foreign = fresh.find((d) => d !== own);
  if (foreign === undefined || (await isInstanceAdmin(deps.db, principal.userId))) return;
  throw new AppError(
    'FORBIDDEN',
    `you can claim ${foreign} only with a verified address in it, or ask an instance administrator`,
    'domains',
  );
}

export async function putSso(ctx: Ctx, input: SsoInput): Promise<SsoConfig> {
  const { deps, principal } = ctx;
  requireSsoAdmin(ctx);
  const issuer = await checkIssuer(deps, input.issuer);
  const domains = [...new Set(input.domains)];
  await checkNewDomains(ctx, domains);
  const now = deps.clock.now().toISOString();
  const wsId = principal.workspaceId;
  try {
    await deps.db.transaction().execute(async (trx) => {
      const old = await ssoRow(trx, wsId);
      if (!old && input.clientSecret === undefined) {
        throw validation('clientSecret', 'clientSecret is required when single sign-on is first configured');
      }
      const taken = await trx
        .selectFrom('sso_domains')
        .select('domain')
        .where('domain', 'in', domains)
        .where('workspace_id', '!=', wsId)
        .executeTakeFirst();
      if (taken) throw claimedElsewhere(taken.domain);
      const sealed =
        input.clientSecret !== undefined
          ? seal(deps.accountKeys.sso, Buffer.from(input.clientSecret, 'utf8'), secretAad(wsId))
          : old!.client_secret_sealed;
      const fields = {
        issuer,
        client_id: input.clientId,
        client_secret_sealed: sealed,
        enforce: input.enforce ? 1 : 0,
      };
      if (old) {
        await trx
          .updateTable('workspace_sso')
          .set({ ...fields, updated_at: now })
          .where('workspace_id', '=', wsId)
          .execute();
      } else {
        await trx
          .insertInto('workspace_sso')
          .values({ workspace_id: wsId, ...fields, created_at: now, updated_at: now })
          .execute();
      }
      await trx.deleteFrom('sso_domains').where('workspace_id', '=', wsId).execute();
      await trx
        .insertInto('sso_domains')
        .values(domains.map((domain) => ({ domain, workspace_id: wsId })))
        .execute();
      await recordChange(trx, ctx, {
        action: 'workspace.sso_update',
        detail: {
          issuer,
          clientId: input.clientId,
          domains,
          enforce: input.enforce,
          // Whether the secret changed, never the secret.
          clientSecretChanged: input.clientSecret !== undefined,
        },
      });
    });
  } catch (e) {
    // Two workspaces claiming one domain at once: the primary key refuses the second.
    if (isUniqueViolation(e)) throw claimedElsewhere(domains.join(', '));
    throw e;
  }
  return present(deps, (await ssoRow(deps.db, wsId))!);
}

export async function deleteSso(ctx: Ctx): Promise<void> {
  const { deps, principal } = ctx;
  requireSsoAdmin(ctx);
  await deps.db.transaction().execute(async (trx) => {
    const old = await ssoRow(trx, principal.workspaceId);
    if (!old) throw notFound('single sign-on configuration');
    await trx.deleteFrom('sso_flows').where('workspace_id', '=', principal.workspaceId).execute();
    await trx.deleteFrom('sso_domains').where('workspace_id', '=', principal.workspaceId).execute();
    await trx.deleteFrom('workspace_sso').where('workspace_id', '=', principal.workspaceId).execute();
    await recordChange(trx, ctx, {
      action: 'workspace.sso_update',
      detail: { deleted: true, issuer: old.issuer, clientId: old.client_id },
    });
  });
}

/** An endpoint the browser or the server is sent to: https, or http where D5 allows private targets. */
function endpointOk(deps: Pick<Deps, 'webhooks'>, raw: string): boolean {
  try {
    const u = new URL(raw);
    return u.protocol === 'https:' || (deps.webhooks.allowPrivate && u.protocol === 'http:');
  } catch {
    return false;
  }
}

/** Why a discovery document cannot serve a code flow with PKCE, or null. */
function unsupported(deps: Pick<Deps, 'webhooks'>, doc: DiscoveryDocument): string | null {
  if (!endpointOk(deps, doc.authorizationEndpoint)) return 'the document has no usable authorization_endpoint';
  if (!endpointOk(deps, doc.tokenEndpoint)) return 'the document has no usable token_endpoint';
  if (!doc.jwksUri) return 'the document has no jwks_uri';
  if (!doc.responseTypes.includes('code')) return 'the provider does not offer the code flow (response_type=code)';
  // A document silent on PKCE is taken at its word of OpenID Connect: the code flow with state and nonce;
  // S256 is sent all the same (ADR 0025). Only a list without S256 says the provider cannot do it.
  if (doc.codeChallengeMethods && !doc.codeChallengeMethods.includes('S256'))
    return 'the provider does not offer PKCE with S256';
  return null;
}

/**
 * ADR 0025: "Test the connection". Fetches the issuer's discovery document and key set now (no cache), on
 * D5's rules, and checks what a sign-in will need. Stores nothing. The client id and secret cannot be checked
 * without a person signing in; they are accepted and ignored here.
 */
export async function testSso(ctx: Ctx, input: { issuer: string }): Promise<TestSsoResponse> {
  const { deps, principal } = ctx;
  requireSsoAdmin(ctx);
  const limit = await deps.limiter.consume(principal.workspaceId, SSO_TEST_PER_WORKSPACE);
  if (!limit.allowed) throw rateLimited(limit.retryAfterMs, 'too many connection tests; try again in a minute');
  const fail = (reason: Exclude<TestSsoResponse, { ok: true }>['reason'], message: string): TestSsoResponse => ({
    ok: false,
    reason,
    message,
  });
  let issuer: string;
  try {
    issuer = await checkIssuer(deps, input.issuer);
  } catch (e) {
    if (e instanceof AppError) return fail('issuer_refused', e.message);
    throw e;
  }
  let doc: DiscoveryDocument;
  try {
    doc = await deps.oidcDiscovery.fetch(issuer);
  } catch (e) {
    const why = e instanceof DiscoveryFailed ? e.message : 'unexpected answer';
    return fail('discovery_failed', `the discovery document could not be fetched (${why})`);
  }
  if (doc.issuer !== issuer) {
    return fail('issuer_mismatch', 'the discovery document names another issuer (it must equal the issuer exactly)');
  }
  const missing = unsupported(deps, doc);
  if (missing) return fail('unsupported', missing);
  let keys = 0;
  try {
    const jwks = (await deps.oidcDiscovery.json(doc.jwksUri)) as { keys?: unknown } | null;
    keys = Array.isArray(jwks?.keys) ? jwks.keys.length : 0;
  } catch (e) {
    const why = e instanceof DiscoveryFailed ? e.message : 'unexpected answer';
    return fail('jwks_failed', `the key set could not be fetched (${why})`);
  }
  if (keys === 0) return fail('jwks_failed', 'the key set holds no keys');
  return {
    ok: true,
    authorizationEndpoint: doc.authorizationEndpoint,
    tokenEndpoint: doc.tokenEndpoint,
    jwksKeys: keys,
    redirectUri: redirectUri(deps),
  };
}

/** A discovery document a sign-in may use (cached), or null. */
async function usableDocument(deps: Deps, issuer: string): Promise<DiscoveryDocument | null> {
  try {
    const doc = await deps.oidcDiscovery.document(issuer);
    return doc.issuer === issuer && unsupported(deps, doc) === null ? doc : null;
  } catch {
    return null;
  }
}

const loginError = (deps: Pick<Deps, 'config'>, reason: SsoError) =>
  `${deps.config.publicUrl}/login?sso_error=${reason}`;

/**
 * `GET /v1/auth/sso/start`: the workspace by the address's domain or by its slug, a flow written to the
 * database, and the provider's authorization URL. `browser` is the binding cookie the browser already has
 * (several tabs may sign in at once), else a new one the route sets.
 */
export async function ssoStart(
  deps: Deps,
  input: { email?: string | undefined; workspace?: string | undefined; ip: string; browser: string | undefined },
): Promise<{ location: string; browser: string }> {
  const limit = await deps.limiter.consume(clientKey(input.ip), SSO_START_PER_IP);
  if (!limit.allowed) throw rateLimited(limit.retryAfterMs, 'too many sign-ins from this address; try again later');
  let workspaceId: string | undefined;
  if (input.email !== undefined) {
    if (!/^[^@\s]+@[^@\s]+$/.test(input.email)) throw validation('email', 'email must be an email address');
    workspaceId = (
      await deps.db
        .selectFrom('sso_domains')
        .select('workspace_id')
        .where('domain', '=', emailDomain(input.email))
        .executeTakeFirst()
    )?.workspace_id;
  } else {
    workspaceId = (
      await deps.db
        .selectFrom('workspaces as w')
        .innerJoin('workspace_sso as s', 's.workspace_id', 'w.id')
        .select('w.id')
        .where('w.slug', '=', input.workspace ?? '')
        .executeTakeFirst()
    )?.id;
  }
  const config = workspaceId ? await ssoRow(deps.db, workspaceId) : undefined;
  if (!config) throw notFound('single sign-on for this address');
  const browser = input.browser && /^[A-Za-z0-9_-]{43}$/.test(input.browser) ? input.browser : random();
  const doc = await usableDocument(deps, config.issuer);
  if (!doc) return { location: loginError(deps, 'idp_unavailable'), browser };

  const state = random();
  const nonce = random();
  const verifier = random();
  const stateHash = sha256Hex(state);
  const now = deps.clock.now();
  // Flows nobody finished go as new ones start (the index on expires_at keeps this one short range).
  await deps.db.deleteFrom('sso_flows').where('expires_at', '<=', now.toISOString()).execute();
  await deps.db
    .insertInto('sso_flows')
    .values({
      state_hash: stateHash,
      workspace_id: config.workspace_id,
      nonce,
      code_verifier_sealed: seal(deps.accountKeys.sso, Buffer.from(verifier, 'utf8'), verifierAad(stateHash)),
      browser_hash: sha256Hex(browser),
      expires_at: new Date(now.getTime() + SSO_FLOW_TTL_MS).toISOString(),
      created_at: now.toISOString(),
    })
    .execute();
  const url = new URL(doc.authorizationEndpoint);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', 'openid email profile');
  url.searchParams.set('client_id', config.client_id);
  url.searchParams.set('redirect_uri', redirectUri(deps));
  url.searchParams.set('state', state);
  url.searchParams.set('nonce', nonce);
  url.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
  url.searchParams.set('code_challenge_method', 'S256');
  return { location: url.toString(), browser };
}

class SsoFailure extends Error {
  constructor(
    readonly reason: SsoError,
    readonly email: string | null = null,
  ) {
    super(reason);
  }
}

/** A query parameter as one short string, or null (absent, repeated, or too long to be genuine). */
const param = (v: unknown, max: number): string | null =>
  typeof v === 'string' && v.length > 0 && v.length <= max ? v : null;

/**
 * `GET /v1/auth/sso/callback`: where the browser goes next, and the session when someone was signed in. Never
 * throws for anything the request or the provider did: the reason becomes `?sso_error=` and is audited
 * (`auth.sso_failed`) in the flow's workspace when the flow was found.
 */
export async function ssoCallback(
  deps: Deps,
  input: {
    query: Record<string, unknown>;
    browser: string | undefined;
    /** An error that is nobody's mistake (answered `server_error`), for the request's log. */
    onUnexpected: (e: unknown) => void;
  },
): Promise<{ location: string; token?: string }> {
  const state = param(input.query.state, 512);
  if (!state) return { location: loginError(deps, 'invalid_state') };
  // Single use on every instance: the one statement that deletes the row is the one that gets it.
  const flow = await deps.db
    .deleteFrom('sso_flows')
    .where('state_hash', '=', sha256Hex(state))
    .returningAll()
    .executeTakeFirst();
  if (!flow) return { location: loginError(deps, 'invalid_state') };
  try {
    return await finishFlow(deps, flow, input);
  } catch (e) {
    const failure = e instanceof SsoFailure ? e : new SsoFailure('server_error');
    if (!(e instanceof SsoFailure)) input.onUnexpected(e);
    await recordAudit(deps.db, {
      ...auditRow(deps.clock, userActor('', flow.workspace_id), {
        action: 'auth.sso_failed',
        detail: { reason: failure.reason, ...(failure.email ? { email: failure.email } : {}) },
      }),
      actor_id: null,
    });
    return { location: loginError(deps, failure.reason) };
  }
}

async function finishFlow(
  deps: Deps,
  flow: {
    workspace_id: string;
    nonce: string;
    code_verifier_sealed: string;
    browser_hash: string;
    expires_at: string;
    state_hash: string;
  },
  input: { query: Record<string, unknown>; browser: string | undefined },
): Promise<{ location: string; token?: string }> {
  if (flow.expires_at <= deps.clock.now().toISOString()) throw new SsoFailure('expired');
  // The browser that started the flow must be the one finishing it (ADR 0025: no login CSRF).
  if (!input.browser || sha256Hex(input.browser) !== flow.browser_hash) throw new SsoFailure('invalid_state');
  if (input.query.error !== undefined) throw new SsoFailure('idp_error');
  const code = param(input.query.code, 4096);
  if (!code) throw new SsoFailure('idp_error');
  const config = await ssoRow(deps.db, flow.workspace_id);
  if (!config) throw new SsoFailure('not_configured');
  const doc = await usableDocument(deps, config.issuer);
  if (!doc) throw new SsoFailure('idp_unavailable');

  const verifier = open(deps.accountKeys.sso, flow.code_verifier_sealed, verifierAad(flow.state_hash)).toString('utf8');
  const secret = open(deps.accountKeys.sso, config.client_secret_sealed, secretAad(config.workspace_id)).toString(
    'utf8',
  );
  let idToken: unknown;
  try {
    // client_secret_basic: each part form-encoded before the colon (RFC 6749 section 2.3.1).
    const basic = Buffer.from(`${formEncode(config.client_id)}:${formEncode(secret)}`).toString('base64');
    const answer = (await deps.oidcDiscovery.postForm(
      doc.tokenEndpoint,
      new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri(deps),
        code_verifier: verifier,
      }),
      { authorization: `Basic ${basic}` },
    )) as { id_token?: unknown } | null;
    idToken = answer?.id_token;
  } catch {
    throw new SsoFailure('token_exchange_failed');
  }
  if (typeof idToken !== 'string') throw new SsoFailure('token_exchange_failed');

  const claims = await verifyIdToken(deps, config, idToken, flow.nonce);
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : null;
  if (!email?.includes('@')) throw new SsoFailure('invalid_id_token');
  if (claims.email_verified !== true) throw new SsoFailure('email_not_verified', email);
  const claimed = await deps.db
    .selectFrom('sso_domains')
    .select('domain')
    .where('domain', '=', emailDomain(email))
    .where('workspace_id', '=', config.workspace_id)
    .executeTakeFirst();
  if (!claimed) throw new SsoFailure('domain_not_allowed', email);
  const name = typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim().slice(0, 100) : null;
  const session = await signIn(deps, config.workspace_id, email, name);
  return { location: `${deps.config.publicUrl}/`, token: session };
}

const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');

/** D63: the ID token's signature by the issuer's keys, `iss`, `aud` (and `azp`), `exp`, and the flow's `nonce`. */
async function verifyIdToken(deps: Deps, config: SsoRow, idToken: string, nonce: string): Promise<JWTPayload> {
  const options = {
    issuer: config.issuer,
    audience: config.client_id,
    algorithms: ID_TOKEN_ALGORITHMS,
    clockTolerance: LEEWAY_S,
    requiredClaims: ['exp', 'iat', 'sub'],
    currentDate: deps.clock.now(),
  };
  let keys: KeyGetter;
  try {
    keys = await deps.issuerKeys.keys(config.issuer);
  } catch {
    throw new SsoFailure('idp_unavailable');
  }
  let payload: JWTPayload;
  try {
    payload = (await jwtVerify(idToken, keys, options)).payload;
  } catch (e) {
    // A kid the cached keys lack: the provider may have rotated (one refetch per issuer per 60 s).
    if (!(e instanceof jose.JWKSNoMatchingKey)) throw new SsoFailure('invalid_id_token');
    const fresh = await deps.issuerKeys.refetchForUnknownKid(config.issuer).catch(() => null);
    if (!fresh) throw new SsoFailure('invalid_id_token');
    try {
      payload = (await jwtVerify(idToken, fresh, options)).payload;
    } catch {
      throw new SsoFailure('invalid_id_token');
    }
  }
  if (payload.nonce !== nonce) throw new SsoFailure('invalid_id_token');
  // OpenID Connect Core 3.1.3.7: with several audiences, the authorized party must be this client.
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== config.client_id) {
    throw new SsoFailure('invalid_id_token');
  }
  return payload;
}

/**
 * The account with this address, made when missing (no password: D54's reset sets one), a membership of the
 * SSO workspace when missing (as Member, or as a pending invite to it says; D15's seats counted), the
 * workspace remembered as where logins land (D68), audited `auth.sso_login`. Two-factor is not asked: the
 * provider authenticated the person (ADR 0025). Returns the session JWT.
 */
async function signIn(deps: Deps, workspaceId: string, email: string, name: string | null): Promise<string> {
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => {
      let user = await trx
        .selectFrom('users')
        .select(['id', 'session_version'])
        .where('email', '=', email)
        .executeTakeFirst();
      const created = user === undefined;
      if (!user) {
        const id = newId();
        await trx
          .insertInto('users')
          .values({
            id,
            name: name ?? email.slice(0, email.lastIndexOf('@')).slice(0, 100),
            email,
            password_hash: NO_PASSWORD_HASH,
            // The provider said the address is verified (email_verified), for this very sign-in.
            email_verified_at: now.toISOString(),
            mfa_secret_sealed: null,
            last_workspace_id: null,
            instance_admin: 0,
            created_at: now.toISOString(),
          })
          .execute();
        user = { id, session_version: 0 };
      }
      const actor = actingAs(deps, userActor(user.id, workspaceId));
      const member = await trx
        .selectFrom('workspace_members')
        .select('ws_role')
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', user.id)
        .executeTakeFirst();
      let joined: string | null = null;
      if (!member) {
        const invite = await trx
          .selectFrom('invites')
          .select(['id', 'ws_role'])
          .where('workspace_id', '=', workspaceId)
          .where('email', '=', email)
          .where('accepted_at', 'is', null)
          .where('revoked_at', 'is', null)
          .where('expires_at', '>', now.toISOString())
          .executeTakeFirst();
        if (invite) {
          // The invite's seat becomes the membership: nothing more is counted.
          await trx
            .updateTable('invites')
            .set({ accepted_at: now.toISOString() })
            .where('id', '=', invite.id)
            .execute();
        } else {
          const ws = await trx
            .selectFrom('workspaces')
            .select('plan')
            .where('id', '=', workspaceId)
            .executeTakeFirstOrThrow();
          await checkLimit(trx, { userId: user.id }, ws.plan, 'members', (await seatsInUse(trx, workspaceId, now)) + 1);
        }
        joined = invite?.ws_role ?? 'Member';
        await trx
          .insertInto('workspace_members')
          .values({
            workspace_id: workspaceId,
            user_id: user.id,
            ws_role: joined as 'Owner' | 'Member',
            joined_at: now.toISOString(),
          })
          .execute();
        await recordChange(trx, actor, {
          action: 'member.add',
          detail: { userId: user.id, email, wsRole: joined, viaSso: true, ...(invite ? { viaInvite: true } : {}) },
        });
      }
      await rememberWorkspace(trx, user.id, workspaceId);
      await recordChange(trx, actor, {
        action: 'auth.sso_login',
        detail: { email, accountCreated: created, ...(joined ? { joinedAs: joined } : {}) },
      });
      return signSessionJwt(deps.authn, { userId: user.id, workspaceId, sessionVersion: user.session_version });
    });
  } catch (e) {
    if (e instanceof AppError && e.code === 'PLAN_LIMIT') throw new SsoFailure('seat_limit', email);
    throw e;
  }
}
