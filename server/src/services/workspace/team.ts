import { randomBytes } from 'node:crypto';
import type { Member } from '@svcenv/contract';
import type { Db } from '../../db/index.js';
import { EMAIL_JOB } from '../../jobs/email.js';
import { DAY_MS } from '../../lib/clock.js';
import { sha256Hex } from '../../lib/crypto.js';
import { AppError, forbidden, notFound, rateLimited } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { clientKey, type LimitRule } from '../../lib/rate-limit.js';
import { grantExpiry, requireOwner, requireUser } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import type { Deps } from '../core/deps.js';
import type { Principal, WsRole } from '../core/principal.js';
import { signSessionJwt } from '../identity/authn.js';
import { checkLimit } from './instance-policy.js';

/** Spec: an invite link expires after 7 days. */
export const INVITE_LIFETIME_MS = 7 * DAY_MS;

/** D16: team management (invites, role changes, removals) is Owner-only, through a dashboard session. */
function requireTeamManager(principal: Principal): void {
  requireUser(principal);
  requireOwner(principal);
}

/** The user's membership of the workspace (their role), if any. */
function membership(db: Db, workspaceId: string, userId: string) {
  return db
    .selectFrom('workspace_members')
    .select('ws_role')
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/**
 * D68: the workspace a login lands in: the one the user last switched to or joined while they are still its
 * member, else the earliest joined (also where account events are audited). One query: the remembered
 * workspace sorts first when its membership still exists.
 */
export async function landingWorkspace(db: Db, userId: string, now: Date = new Date()): Promise<string | null> {
  const row = await db
    .selectFrom('workspace_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select('m.workspace_id')
    .where('m.user_id', '=', userId)
    // D73: not a temporary membership that ended (an expired temporary Owner is still a Member).
    .where((eb) =>
      eb.or([
        eb('m.expires_at', 'is', null),
        eb('m.ws_role', '=', 'Owner'),
        eb('m.expires_at', '>', now.toISOString()),
      ]),
    )
    .orderBy((eb) => eb.case().when('m.workspace_id', '=', eb.ref('u.last_workspace_id')).then(0).else(1).end())
    .orderBy('m.joined_at')
    .orderBy('m.workspace_id')
    .executeTakeFirst();
  return row?.workspace_id ?? null;
}

/** D68: remembers the workspace a login should land in next (switch-workspace, accept-invite). */
export async function rememberWorkspace(db: Db, userId: string, workspaceId: string): Promise<void> {
  await db.updateTable('users').set({ last_workspace_id: workspaceId }).where('id', '=', userId).execute();
}

/** Members plus pending, unexpired invites: what the `members` limit counts (D15). */
export async function seatsInUse(db: Db, workspaceId: string, now: Date): Promise<number> {
  const members = await db
    .selectFrom('workspace_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  const pending = await db
    .selectFrom('invites')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now.toISOString())
    .executeTakeFirst();
  return Number(members?.n ?? 0) + Number(pending?.n ?? 0);
}

export async function listMembers(ctx: Ctx): Promise<Member[]> {
  const { deps, principal } = ctx;
  requireUser(principal);
  const rows = await deps.db
    .selectFrom('workspace_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.name', 'u.email', 'm.ws_role', 'm.joined_at', 'm.expires_at'])
    .where('m.workspace_id', '=', principal.workspaceId)
    .orderBy('m.joined_at')
    .orderBy('u.name')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    email: r.email,
    wsRole: r.ws_role,
    joinedAt: r.joined_at,
    expiresAt: r.expires_at,
  }));
}

async function workspaceName(db: Db, id: string): Promise<{ name: string; plan: string }> {
  return db.selectFrom('workspaces').select(['name', 'plan']).where('id', '=', id).executeTakeFirstOrThrow();
}

/**
 * Spec/D17: an email with an account is added at once (200) and notified; any other email gets a pending
 * invite with a single-use token valid 7 days, emailed as a link (202). Email leaves through the job queue,
 * so a down SMTP server delays the message but never loses the invite.
 */
export async function invite(ctx: Ctx, input: { email: string; wsRole: WsRole }) {
  const { deps, principal } = ctx;
  requireTeamManager(principal);
  const email = input.email.trim().toLowerCase();
  const now = deps.clock.now();
  const result = await deps.db.transaction().execute(async (trx) => {
    const ws = await workspaceName(trx, principal.workspaceId);
    const user = await trx.selectFrom('users').select(['id', 'name']).where('email', '=', email).executeTakeFirst();
    if (user) {
      const existing = await membership(trx, principal.workspaceId, user.id);
      if (existing) throw new AppError('CONFLICT', 'this person is already a member of the workspace', 'email');
      await checkLimit(trx, principal, ws.plan, 'members', (await seatsInUse(trx, principal.workspaceId, now)) + 1);
      await trx
        .insertInto('workspace_members')
        .values({
          workspace_id: principal.workspaceId,
          user_id: user.id,
          ws_role: input.wsRole,
          joined_at: now.toISOString(),
        })
        .execute();
      // A pending invite to this address is settled by the direct add: left open, it would hold a seat and,
      // after a later removal, let the person back in by its old link.
      await closePendingInvites(trx, principal.workspaceId, email, now);
      await recordChange(trx, ctx, {
        action: 'member.add',
        detail: { userId: user.id, email, wsRole: input.wsRole },
      });
      await deps.jobs.enqueue(trx, {
        kind: EMAIL_JOB,
        payload: {
          to: email,
          subject: `You were added to ${ws.name} on svcenv`,
          text: `${principal.userName} added you to the workspace "${ws.name}" as ${input.wsRole}.\n\nSign in to see it: ${deps.config.publicUrl}/\n`,
          kind: 'member_added',
        },
      });
      return { status: 200 as const, body: { userId: user.id, name: user.name, wsRole: input.wsRole } };
    }
    // A new invite to the same address replaces the pending one (the old link stops working).
    await closePendingInvites(trx, principal.workspaceId, email, now);
    await checkLimit(trx, principal, ws.plan, 'members', (await seatsInUse(trx, principal.workspaceId, now)) + 1);
    const token = randomBytes(32).toString('base64url');
    const link = `${deps.config.publicUrl}/invite?token=${token}`;
    await trx
      .insertInto('invites')
      .values({
        id: newId(),
        workspace_id: principal.workspaceId,
        email,
        ws_role: input.wsRole,
        token_hash: sha256Hex(token),
        invited_by: principal.userId,
        expires_at: new Date(now.getTime() + INVITE_LIFETIME_MS).toISOString(),
        accepted_at: null,
        revoked_at: null,
        created_at: now.toISOString(),
      })
      .execute();
    await recordChange(trx, ctx, { action: 'member.invite', detail: { email, wsRole: input.wsRole } });
    await deps.jobs.enqueue(trx, {
      kind: EMAIL_JOB,
      payload: {
        to: email,
        subject: `${principal.userName} invited you to ${ws.name} on svcenv`,
        text: `${principal.userName} invited you to the workspace "${ws.name}" as ${input.wsRole}.\n\nCreate an account with this email address, then accept the invite (the link expires in 7 days):\n${link}\n`,
        kind: 'invite',
      },
    });
    // Without SMTP the message goes nowhere (D3 logs only its recipient, subject and kind): the Owner gets the
    // link to hand over, or the invitee would wait for an email that never comes (ADR 0012, ADR 0021). With
    // SMTP the link stays in the email.
    const handOver = deps.config.SMTP_URL ? {} : { inviteUrl: link };
    return { status: 202 as const, body: { invited: true as const, email, ...handOver } };
  });
  deps.jobs.kick();
  return result;
}

export async function listInvites(ctx: Ctx) {
  const { deps, principal } = ctx;
  requireTeamManager(principal);
  const rows = await deps.db
    .selectFrom('invites')
    .select(['id', 'email', 'ws_role', 'invited_by', 'created_at', 'expires_at'])
    .where('workspace_id', '=', principal.workspaceId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', deps.clock.now().toISOString())
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    wsRole: r.ws_role,
    invitedBy: r.invited_by,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  }));
}

export async function revokeInvite(ctx: Ctx, input: { id: string }): Promise<void> {
  const { deps, principal } = ctx;
  const { id } = input;
  requireTeamManager(principal);
  await deps.db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('invites')
      .set({ revoked_at: deps.clock.now().toISOString() })
      .where('id', '=', id)
      .where('workspace_id', '=', principal.workspaceId)
      .where('accepted_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) throw notFound('invite');
    await recordChange(trx, ctx, { action: 'member.invite', detail: { inviteId: id, revoked: true } });
  });
}

/** Ends every pending invite to `email` in the workspace (replaced by a new one, or settled by a direct add). */
async function closePendingInvites(trx: Db, workspaceId: string, email: string, now: Date): Promise<void> {
  await trx
    .updateTable('invites')
    .set({ revoked_at: now.toISOString() })
    .where('workspace_id', '=', workspaceId)
    .where('email', '=', email)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Public invite look-ups per client IP: enough for people opening links, too few to guess tokens with. */
export const INVITE_INFO_PER_IP: LimitRule = { name: 'invite-info-ip', max: 30, windowMs: 60_000 };

/**
 * GET /v1/auth/invite?token= (public): what the invite page needs to greet the invitee (workspace, inviter,
 * invited email to pre-fill). A live token only; anything else is the same 404 as accept-invite, so the
 * answer never tells a used token from one that never existed. Rate-limited per IP like the other public
 * auth routes; the token is 256 random bits, so the limit bounds load rather than guessing.
 */
export async function inviteInfo(deps: Deps, input: { token: string; ip: string }) {
  const r = await deps.limiter.consume(clientKey(input.ip), INVITE_INFO_PER_IP);
  if (!r.allowed) throw rateLimited(r.retryAfterMs, 'too many invite look-ups from this address; try again later');
  const row = await deps.db
    .selectFrom('invites as i')
    .innerJoin('workspaces as w', 'w.id', 'i.workspace_id')
    .leftJoin('users as u', 'u.id', 'i.invited_by')
    .select([
      'i.email',
      'i.accepted_at',
      'i.revoked_at',
      'i.expires_at',
      'w.name as workspaceName',
      'u.name as inviterName',
    ])
    .where('i.token_hash', '=', sha256Hex(input.token))
    .executeTakeFirst();
  if (!row || row.accepted_at || row.revoked_at || row.expires_at <= deps.clock.now().toISOString()) {
    throw notFound('invite (it may have expired or been used)');
  }
  // An inviter who has since deleted their account leaves the invite valid; the page then names no one.
  return { workspaceName: row.workspaceName, inviterName: row.inviterName ?? '', email: row.email };
}

/**
 * D17: the caller's email must equal the invited one (else 403); an expired, revoked or used token is 404.
 * The single use is enforced by a conditional update, so two concurrent accepts cannot both succeed.
 */
export async function acceptInvite(ctx: Ctx, input: { token: string }) {
  const { deps, principal } = ctx;
  const { token } = input;
  requireUser(principal);
  const now = deps.clock.now();
  const result = await deps.db.transaction().execute(async (trx) => {
    const inv = await trx
      .selectFrom('invites')
      .selectAll()
      .where('token_hash', '=', sha256Hex(token))
      .executeTakeFirst();
    if (!inv || inv.accepted_at || inv.revoked_at || inv.expires_at <= now.toISOString()) {
      throw notFound('invite (it may have expired or been used)');
    }
    const user = await trx
      .selectFrom('users')
      .select(['email', 'session_version'])
      .where('id', '=', principal.userId)
      .executeTakeFirstOrThrow();
    if (user.email !== inv.email) throw forbidden('this invite was sent to another email address');
    const claimed = await trx
      .updateTable('invites')
      .set({ accepted_at: now.toISOString() })
      .where('id', '=', inv.id)
      .where('accepted_at', 'is', null)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) throw notFound('invite (it may have expired or been used)');
    const already = await membership(trx, inv.workspace_id, principal.userId);
    if (!already) {
      await trx
        .insertInto('workspace_members')
        .values({
          workspace_id: inv.workspace_id,
          user_id: principal.userId,
          ws_role: inv.ws_role,
          joined_at: now.toISOString(),
        })
        .execute();
      // Recorded in the workspace joined, which may not be the one the session is in.
      const joining = { deps, principal: { ...principal, workspaceId: inv.workspace_id } };
      await recordChange(trx, joining, {
        action: 'member.add',
        detail: { userId: principal.userId, email: inv.email, viaInvite: true },
      });
    }
    await rememberWorkspace(trx, principal.userId, inv.workspace_id);
    const ws = await workspaceName(trx, inv.workspace_id);
    return {
      workspaceId: inv.workspace_id,
      workspaceName: ws.name,
      wsRole: already?.ws_role ?? inv.ws_role,
      sv: user.session_version,
    };
  });
  const jwt = await signSessionJwt(deps.authn, {
    userId: principal.userId,
    workspaceId: result.workspaceId,
    sessionVersion: result.sv,
  });
  return { token: jwt, workspaceId: result.workspaceId, workspaceName: result.workspaceName, wsRole: result.wsRole };
}

async function ownerCount(db: Db, workspaceId: string): Promise<number> {
  const r = await db
    .selectFrom('workspace_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('ws_role', '=', 'Owner')
    // D73: a temporary Owner does not keep the workspace owned.
    .where('expires_at', 'is', null)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** D16: 200 Member; demoting the last Owner (themselves included) is 409. */
export async function changeRole(
  ctx: Ctx,
  input: { userId: string; wsRole: WsRole; expiresAt?: string | null },
): Promise<Member> {
  const { deps, principal } = ctx;
  const { userId, wsRole } = input;
  requireTeamManager(principal);
  // D73: a temporary role: an Owner until then is a Member again, a Member's membership then ends.
  const expires_at = grantExpiry(input.expiresAt, deps.clock.now());
  return deps.db.transaction().execute(async (trx) => {
    const m = await trx
      .selectFrom('workspace_members as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['u.id', 'u.name', 'u.email', 'm.ws_role', 'm.joined_at', 'm.expires_at'])
      .where('m.workspace_id', '=', principal.workspaceId)
      .where('m.user_id', '=', userId)
      .executeTakeFirst();
    if (!m) throw notFound('member');
    const permanentOwner = m.ws_role === 'Owner' && m.expires_at === null;
    if (
      permanentOwner &&
      (wsRole !== 'Owner' || expires_at !== null) &&
      (await ownerCount(trx, principal.workspaceId)) <= 1
    ) {
      throw new AppError('CONFLICT', 'a workspace needs at least one Owner; promote someone else first', 'wsRole');
    }
    // The same role again changes nothing, so nothing is recorded (the audit log lists changes).
    const same = { id: m.id, name: m.name, email: m.email, wsRole, joinedAt: m.joined_at, expiresAt: expires_at };
    if (m.ws_role === wsRole && m.expires_at === expires_at) return same;
    await trx
      .updateTable('workspace_members')
      .set({ ws_role: wsRole, expires_at })
      .where('workspace_id', '=', principal.workspaceId)
      .where('user_id', '=', userId)
      .execute();
    await recordChange(trx, ctx, {
      action: 'member.role_change',
      detail: { userId, from: m.ws_role, to: wsRole, ...(expires_at ? { expiresAt: expires_at } : {}) },
    });
    return same;
  });
}

/**
 * Spec: access and project memberships go at once (the next request of the user, and of every token they
 * created, fails: both read membership from the database, D9/D32). An Owner cannot remove themselves (403).
 */
export async function removeMember(ctx: Ctx, input: { userId: string }): Promise<void> {
  const { deps, principal } = ctx;
  const { userId } = input;
  requireTeamManager(principal);
  if (userId === principal.userId) throw forbidden('an Owner cannot remove themselves');
  await deps.db.transaction().execute(async (trx) => {
    const removed = await trx
      .deleteFrom('workspace_members')
      .where('workspace_id', '=', principal.workspaceId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (Number(removed.numDeletedRows) === 0) throw notFound('member');
    const revoked = await endMembershipGrants(trx, principal.workspaceId, userId, deps.clock.now());
    await recordChange(trx, ctx, {
      action: 'member.remove',
      detail: { userId, tokensRevoked: revoked },
    });
  });
}

/**
 * What ends with a workspace membership (a removal, or D73's temporary membership running out, services/
 * access/expiry.ts): the person's project roles and per-environment permissions in the workspace, and their
 * tokens, revoked for good (D32) so that adding the person back later does not bring back credentials handed
 * out before (in CI systems, on other machines). Returns how many tokens were revoked.
 */
export async function endMembershipGrants(trx: Db, workspaceId: string, userId: string, now: Date): Promise<number> {
  const projectIds = trx.selectFrom('projects').select('id').where('workspace_id', '=', workspaceId);
  await trx.deleteFrom('env_permissions').where('user_id', '=', userId).where('project_id', 'in', projectIds).execute();
  await trx.deleteFrom('project_members').where('user_id', '=', userId).where('project_id', 'in', projectIds).execute();
  const revoked = await trx
    .updateTable('access_tokens')
    .set({ revoked_at: now.toISOString() })
    .where('workspace_id', '=', workspaceId)
    .where('created_by', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(revoked.numUpdatedRows);
}
