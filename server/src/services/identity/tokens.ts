import { hash as bcryptHash } from '@node-rs/bcrypt';
import type { AccessToken, TokenSelf } from '@svcenv/contract';
import type { Selectable } from 'kysely';
import type { AccessTokensTable } from '../../db/schema.js';
import { DAY_MS } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { AppError, notFound, unauthorized } from '../../lib/errors.js';
import { newAccessToken, newId, TOKEN_DISPLAY_PREFIX_LEN } from '../../lib/ids.js';
import { authorizeProject, requireUser } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import type { Deps } from '../core/deps.js';
import type { Principal } from '../core/principal.js';
import { leasesOfTokensDue } from '../credentials/leases.js';

const BCRYPT_COST = 10;

/** Only bcrypt(SHA-256(token)) is stored (spec "Access token"). */
async function hashToken(token: string): Promise<string> {
  return bcryptHash(sha256Hex(token), { cost: BCRYPT_COST });
}

function present(row: Selectable<AccessTokensTable>): AccessToken {
  return {
    id: row.id,
    name: row.name,
    tokenPrefix: row.token_prefix,
    scope: row.scope,
    envs: JSON.parse(row.envs) as string[],
    projectId: row.project_id,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    trustedCidrs: cidrsOf(row.trusted_cidrs),
  };
}

const cidrsOf = (stored: string | null): string[] => (stored ? (JSON.parse(stored) as string[]) : []);

/** The caller's own tokens in this workspace that are not revoked (an Owner sees everyone's). */
export async function listTokens(ctx: Ctx): Promise<AccessToken[]> {
  const { deps, principal } = ctx;
  requireUser(principal);
  let q = deps.db
    .selectFrom('access_tokens')
    .selectAll()
    .where('workspace_id', '=', principal.workspaceId)
    .where('revoked_at', 'is', null);
  if (principal.wsRole !== 'Owner') q = q.where('created_by', '=', principal.userId);
  return (await q.orderBy('created_at', 'desc').execute()).map(present);
}

export async function createToken(
  ctx: Ctx,
  input: {
    name: string;
    scope: 'read' | 'write' | 'deploy';
    envs: string[];
    projectId?: string | null | undefined;
    expiresIn?: number | null | undefined;
    trustedCidrs?: string[] | undefined;
  },
) {
  const { deps, principal } = ctx;
  requireUser(principal);
  if (input.envs.includes('*') && input.envs.length > 1) {
    throw new AppError('VALIDATION', '"*" means every environment and cannot be combined with names', 'envs');
  }
  // A project restriction must name a project the creator can see (404 otherwise, like every other read).
  if (input.projectId) await authorizeProject(ctx, input.projectId);
  const token = newAccessToken();
  const now = deps.clock.now();
  const row = {
    id: newId(),
    workspace_id: principal.workspaceId,
    created_by: principal.userId,
    name: input.name,
    token_prefix: token.slice(0, TOKEN_DISPLAY_PREFIX_LEN),
    token_hash: await hashToken(token),
    scope: input.scope,
    envs: JSON.stringify([...new Set(input.envs)]),
    project_id: input.projectId ?? null,
    last_used_at: null,
    expires_at: input.expiresIn ? new Date(now.getTime() + input.expiresIn * DAY_MS).toISOString() : null,
    revoked_at: null,
    created_at: now.toISOString(),
    trusted_cidrs: input.trustedCidrs?.length ? JSON.stringify([...new Set(input.trustedCidrs)]) : null,
  };
  await deps.db.transaction().execute(async (trx) => {
    // The project may be deleted between the check above and this insert: looked up again in the
    // transaction, and on PostgreSQL locked (FOR KEY SHARE) so that a delete waits for this commit, the
    // token is then either created for an existing project or refused 404, never a foreign-key 500.
    if (row.project_id) {
      let q = trx.selectFrom('projects').select('id').where('id', '=', row.project_id);
      if (deps.dialect === 'postgres') q = q.forKeyShare();
      if (!(await q.executeTakeFirst())) throw notFound('project');
    }
    await trx.insertInto('access_tokens').values(row).execute();
    await recordChange(trx, ctx, {
      action: 'token.create',
      projectId: row.project_id,
      detail: {
        tokenId: row.id,
        name: row.name,
        scope: row.scope,
        envs: JSON.parse(row.envs),
        trustedCidrs: cidrsOf(row.trusted_cidrs),
      },
    });
  });
  const p = present(row);
  return {
    id: p.id,
    token,
    name: p.name,
    scope: p.scope,
    envs: p.envs,
    projectId: p.projectId,
    expiresAt: p.expiresAt,
    trustedCidrs: p.trustedCidrs,
  };
}

/**
 * D58: the access token making the request, as `svcenv whoami` shows it. There is no other way for a
 * token to learn its own name, scope or restrictions (the token list needs a session, D10). Only the
 * token itself is described, so this reveals nothing its holder could not already try out.
 */
export async function describeOwnToken(ctx: Ctx): Promise<TokenSelf> {
  const { deps, principal } = ctx;
  if (principal.kind !== 'token' || !principal.token) {
    throw unauthorized('this endpoint requires an access token (tok_live_...), not a session');
  }
  if (principal.token.identity) return describeIdentityToken(ctx);
  const row = await deps.db
    .selectFrom('access_tokens')
    .selectAll()
    .where('id', '=', principal.token.id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  // Revoked between authentication and this read: the credential is no longer valid.
  if (!row) throw unauthorized();
  const p = present(row);
  return {
    id: p.id,
    name: p.name,
    tokenPrefix: p.tokenPrefix,
    scope: p.scope,
    envs: p.envs,
    projectId: p.projectId,
    expiresAt: p.expiresAt,
    trustedCidrs: p.trustedCidrs,
  };
}

/** D60/D61: a token issued to a workload identity describes itself and names the identity. */
async function describeIdentityToken(ctx: Ctx): Promise<TokenSelf> {
  const { deps, principal } = ctx;
  const grant = principal.token!;
  const row = await deps.db
    .selectFrom('identity_tokens')
    .select(['token_prefix', 'expires_at'])
    .where('id', '=', grant.id)
    .executeTakeFirst();
  if (!row) throw unauthorized();
  return {
    id: grant.id,
    name: grant.name,
    tokenPrefix: row.token_prefix,
    scope: grant.scope,
    envs: grant.envs,
    projectId: grant.projectId,
    expiresAt: row.expires_at,
    trustedCidrs: [...grant.trustedCidrs],
    identity: grant.identity!,
  };
}

async function ownToken(deps: Deps, principal: Principal, id: string) {
  requireUser(principal);
  const row = await deps.db
    .selectFrom('access_tokens')
    .selectAll()
    .where('id', '=', id)
    .where('workspace_id', '=', principal.workspaceId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  // Members manage their own tokens; an Owner manages every token of the workspace.
  if (!row || (principal.wsRole !== 'Owner' && row.created_by !== principal.userId)) throw notFound('token');
  return row;
}

/** Revokes the token and issues a new one with the same settings; the old one fails at once. */
export async function rotateToken(ctx: Ctx, input: { id: string }) {
  const { deps, principal } = ctx;
  const { id } = input;
  const old = await ownToken(deps, principal, id);
  const now = deps.clock.now().toISOString();
  // Spec state table: only an active token rotates. The new one keeps the same expiry, so it would be
  // born dead; the caller is told to create a new token instead (ADR 0002).
  if (old.expires_at && old.expires_at <= now) {
    throw new AppError('CONFLICT', 'this access token has expired and cannot be rotated; create a new one');
  }
  const token = newAccessToken();
  const row = {
    ...old,
    id: newId(),
    token_prefix: token.slice(0, TOKEN_DISPLAY_PREFIX_LEN),
    token_hash: await hashToken(token),
    last_used_at: null,
    created_at: now,
  };
  await deps.db.transaction().execute(async (trx) => {
    const revoked = await trx
      .updateTable('access_tokens')
      .set({ revoked_at: now })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(revoked.numUpdatedRows) !== 1) throw notFound('token');
    // D71: the leases the old token made end with it.
    await leasesOfTokensDue(trx, deps, [id]);
    await trx.insertInto('access_tokens').values(row).execute();
    await recordChange(trx, ctx, {
      action: 'token.rotate',
      projectId: row.project_id,
      detail: { tokenId: id, newTokenId: row.id, name: row.name },
    });
  });
  return {
    id: row.id,
    token,
    name: row.name,
    scope: row.scope,
    envs: JSON.parse(row.envs) as string[],
    trustedCidrs: cidrsOf(row.trusted_cidrs),
  };
}

export async function revokeToken(ctx: Ctx, input: { id: string }): Promise<void> {
  const { deps, principal } = ctx;
  const { id } = input;
  const row = await ownToken(deps, principal, id);
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('access_tokens')
      .set({ revoked_at: deps.clock.now().toISOString() })
      .where('id', '=', id)
      .execute();
    // D71 details: revoking a token revokes the leases it made (the revocation job takes them at once).
    await leasesOfTokensDue(trx, deps, [id]);
    await recordChange(trx, ctx, {
      action: 'token.revoke',
      projectId: row.project_id,
      detail: { tokenId: id, name: row.name },
    });
  });
}
