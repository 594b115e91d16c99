import type { AccessRequest } from '@svcenv/contract';
import type { Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { AccessRequestsTable } from '../../db/schema.js';
import { EMAIL_JOB } from '../../jobs/email.js';
import { AppError, forbidden, notFound, validation } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { MailMessage } from '../../lib/mail.js';
import { authorizeEnv, authorizeProject, type ProjectAccess, tokenAllowsEnv, userPermission } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import { grantLive, liveWsRole } from '../core/principal.js';
import { REQUEST_PENDING_MS } from './expiry.js';

/**
 * D74: access requests (ADR 0027). A project member asks for `read` or `write` on one environment for a
 * while; an Owner or the project's Admin other than the requester approves it, which grants a D73 temporary
 * per-environment permission counted from the approval (the authorization refuses it the moment it ends),
 * or denies it; the requester may withdraw it; a pending one expires after 24 hours (services/access/
 * expiry.ts). Each step is audited and sent to webhooks as `access.<step>`, with who, what and why.
 */

type Row = Selectable<AccessRequestsTable>;
type Permission = 'read' | 'write';
const RANK = { none: 0, read: 1, write: 2 } as const;

/** The request with the names the answer shows. */
type ListedRow = Row & { env: string; requester_name: string; requester_email: string; decider_name: string | null };

function listed(db: Db) {
  return db
    .selectFrom('access_requests as r')
    .innerJoin('environments as e', 'e.id', 'r.environment_id')
    .innerJoin('users as u', 'u.id', 'r.requester_id')
    .leftJoin('users as d', 'd.id', 'r.decided_by')
    .selectAll('r')
    .select(['e.name as env', 'u.name as requester_name', 'u.email as requester_email', 'd.name as decider_name']);
}

/**
 * The answer of a request at `now`: a pending one past its 24 hours is shown `expired` at once, before the job
 * records it, as the authorization judges a temporary grant at once.
 */
function toAnswer(r: ListedRow, now: Date): AccessRequest {
  const pendingUntil = new Date(Date.parse(r.created_at) + REQUEST_PENDING_MS).toISOString();
  const lapsed = r.status === 'pending' && Date.parse(pendingUntil) <= now.getTime();
  const answer: AccessRequest = {
    id: r.id,
    projectId: r.project_id,
    env: r.env,
    permission: r.permission,
    durationSeconds: Number(r.duration_seconds),
    reason: r.reason,
    status: lapsed ? 'expired' : r.status,
    requesterId: r.requester_id,
    requesterName: r.requester_name,
    requesterEmail: r.requester_email,
    createdAt: r.created_at,
    pendingUntil,
  };
  if (r.decided_by) answer.decidedById = r.decided_by;
  if (r.decider_name) answer.decidedByName = r.decider_name;
  if (r.decided_at) answer.decidedAt = r.decided_at;
  else if (lapsed) answer.decidedAt = pendingUntil;
  if (r.decision_reason) answer.decisionReason = r.decision_reason;
  if (r.status === 'approved' && r.granted_seconds != null && r.decided_at) {
    answer.grantedSeconds = Number(r.granted_seconds);
    answer.grantExpiresAt = new Date(Date.parse(r.decided_at) + Number(r.granted_seconds) * 1000).toISOString();
  }
  return answer;
}

async function loadRequest(db: Db, projectId: string, requestId: string): Promise<ListedRow> {
  const row = await listed(db).where('r.id', '=', requestId).where('r.project_id', '=', projectId).executeTakeFirst();
  if (!row) throw notFound('access request');
  return row;
}

/** Who decides: the workspace's Owners and the project's Admins, through a dashboard session (ADR 0027). */
function mayDecide(access: ProjectAccess): boolean {
  return access.principal.token === null && (access.role === null || access.role === 'Admin');
}

export async function createAccessRequest(
  ctx: Ctx,
  input: { projectId: string; env: string; permission: Permission; durationSeconds: number; reason: string },
): Promise<AccessRequest & { notified: { approvers: number; email: boolean } }> {
  const { deps, principal } = ctx;
  const { access, env } = await authorizeEnv(ctx, { projectId: input.projectId, env: input.env, need: 'visible' });
  if (!tokenAllowsEnv(principal, env.name)) {
    throw forbidden(`this token is restricted to other environments than "${env.name}"`);
  }
  // The person's own access, not a token's cap: a read token of a writer asks for nothing it lacks.
  const has = userPermission(access, env);
  if (RANK[has] >= RANK[input.permission]) {
    throw new AppError(
      'CONFLICT',
      `you already have ${has === 'write' ? 'write' : 'read'} access to environment "${env.name}"`,
      'permission',
    );
  }
  const now = deps.clock.now();
  const id = newId();
  const result = await deps.db.transaction().execute(async (trx) => {
    const open = await trx
      .selectFrom('access_requests')
      .select(['id', 'created_at'])
      .where('project_id', '=', access.project.id)
      .where('environment_id', '=', env.id)
      .where('requester_id', '=', principal.userId)
      .where('permission', '=', input.permission)
      .where('status', '=', 'pending')
      .execute();
    if (open.some((o) => Date.parse(o.created_at) + REQUEST_PENDING_MS > now.getTime())) {
      throw new AppError(
        'CONFLICT',
        `you already asked for ${input.permission} access to "${env.name}"; that request is still pending`,
        'permission',
      );
    }
    await trx
      .insertInto('access_requests')
      .values({
        id,
        workspace_id: principal.workspaceId,
        project_id: access.project.id,
        environment_id: env.id,
        requester_id: principal.userId,
        permission: input.permission,
        duration_seconds: input.durationSeconds,
        reason: input.reason,
        status: 'pending',
        decided_by: null,
        decision_reason: null,
        granted_seconds: null,
        created_at: now.toISOString(),
        decided_at: null,
      })
      .execute();
    const row = await loadRequest(trx, access.project.id, id);
    await recordChange(trx, ctx, {
      action: 'access.request',
      projectId: access.project.id,
      targetEnv: env.name,
      detail: {
        requestId: id,
        userId: principal.userId,
        permission: input.permission,
        durationSeconds: input.durationSeconds,
      },
      event: { keys: [], access: accessEvent(row, now) },
    });
    const to = await approvers(trx, access, now);
    for (const a of to) {
      await mail(trx, ctx, {
        to: a.email,
        subject: `${row.requester_name} asks for ${input.permission} access to ${access.project.name} / ${env.name}`,
        text:
          `${row.requester_name} (${row.requester_email}) asks for ${input.permission} access to the environment "${env.name}" of the project "${access.project.name}" for ${describeDuration(input.durationSeconds)}.\n\n` +
          `Reason: ${input.reason}\n\nApprove or deny it (the request expires in 24 hours): ${deps.config.publicUrl}/access-requests\n`,
        kind: 'access_request',
      });
    }
    return { answer: toAnswer(row, now), approvers: to.length };
  });
  deps.jobs.kick();
  // Honest without SMTP (ADR 0012): approvers then see the request only in the dashboard.
  return { ...result.answer, notified: { approvers: result.approvers, email: Boolean(deps.config.SMTP_URL) } };
}

/** D74: the requester sees their own requests; Owners and the project's Admins see all of the project's. */
export async function listAccessRequests(
  ctx: Ctx,
  input: { projectId: string; status?: AccessRequest['status'] | undefined },
): Promise<AccessRequest[]> {
  const access = await authorizeProject(ctx, input.projectId, 'visible', true);
  const now = ctx.deps.clock.now();
  let q = listed(ctx.deps.db).where('r.project_id', '=', access.project.id);
  if (!(access.role === null || access.role === 'Admin')) q = q.where('r.requester_id', '=', ctx.principal.userId);
  const rows = await q.orderBy('r.created_at', 'desc').orderBy('r.id').limit(500).execute();
  const answers = rows.map((r) => toAnswer(r, now));
  return input.status ? answers.filter((a) => a.status === input.status) : answers;
}

/** Loads a request its decider may decide: 403 for anyone else and for the requester, 409 once decided. */
async function decidable(ctx: Ctx, projectId: string, requestId: string, verb: string) {
  const access = await authorizeProject(ctx, projectId, 'visible');
  const row = await loadRequest(ctx.deps.db, access.project.id, requestId);
  if (!mayDecide(access)) {
    throw forbidden(`only a workspace Owner or the project's Admin may ${verb} an access request, from the dashboard`);
  }
  if (row.requester_id === ctx.principal.userId) {
    throw forbidden(`you cannot ${verb} your own access request; another Owner or Admin must`);
  }
  requirePending(row, ctx.deps.clock.now());
  return { access, row };
}

function requirePending(row: ListedRow, now: Date): void {
  const answer = toAnswer(row, now);
  if (answer.status !== 'pending') throw new AppError('CONFLICT', `this access request is already ${answer.status}`);
}

export async function approveAccessRequest(
  ctx: Ctx,
  input: { projectId: string; requestId: string; durationSeconds?: number | undefined },
): Promise<AccessRequest> {
  const { deps } = ctx;
  const { access, row } = await decidable(ctx, input.projectId, input.requestId, 'approve');
  const granted = input.durationSeconds ?? Number(row.duration_seconds);
  if (granted > Number(row.duration_seconds)) {
    throw validation('durationSeconds', `the request asked for ${row.duration_seconds} seconds; approve that or less`);
  }
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + granted * 1000).toISOString();
  const answer = await deps.db.transaction().execute(async (trx) => {
    await closePending(
      trx,
      row.id,
      { status: 'approved', decided_by: ctx.principal.userId, granted_seconds: granted },
      now,
    );
    // The requester must still be in the project (a removal since ends what they could be granted).
    const member = await trx
      .selectFrom('project_members')
      .select(['role', 'expires_at'])
      .where('project_id', '=', access.project.id)
      .where('user_id', '=', row.requester_id)
      .executeTakeFirst();
    const membership = await trx
      .selectFrom('workspace_members')
      .select(['ws_role', 'expires_at'])
      .where('workspace_id', '=', ctx.principal.workspaceId)
      .where('user_id', '=', row.requester_id)
      .executeTakeFirst();
    // D73: a temporary membership that ran out counts as none, as everywhere.
    if (!membership || !liveWsRole(membership.ws_role, membership.expires_at, now)) {
      throw new AppError('CONFLICT', `${row.requester_name} is no longer a member of the workspace`);
    }
    if (!member || !grantLive(member.expires_at, now)) {
      throw new AppError('CONFLICT', `${row.requester_name} is no longer a member of this project`);
    }
    // D73: the grant, temporary; request_id ties it to this request (D76 shows it).
    await trx
      .insertInto('env_permissions')
      .values({
        project_id: access.project.id,
        user_id: row.requester_id,
        environment_id: row.environment_id,
        permission: row.permission,
        expires_at: expiresAt,
        request_id: row.id,
      })
      .onConflict((oc) =>
        oc
          .columns(['project_id', 'user_id', 'environment_id'])
          .doUpdateSet({ permission: row.permission, expires_at: expiresAt, request_id: row.id }),
      )
      .execute();
    const after = await loadRequest(trx, access.project.id, row.id);
    await recordChange(trx, ctx, {
      action: 'access.approve',
      projectId: access.project.id,
      targetEnv: row.env,
      detail: {
        requestId: row.id,
        userId: row.requester_id,
        permission: row.permission,
        grantedSeconds: granted,
        expiresAt,
      },
      event: { keys: [], access: accessEvent(after, now) },
    });
    await mail(trx, ctx, {
      to: row.requester_email,
      subject: `Your access to ${access.project.name} / ${row.env} was approved`,
      text:
        `${ctx.principal.actorName} approved your request for ${row.permission} access to the environment "${row.env}" of the project "${access.project.name}".\n\n` +
        `It ends by itself at ${expiresAt} (${describeDuration(granted)} from the approval).\n\n${deps.config.publicUrl}/projects/${access.project.id}\n`,
      kind: 'access_request_outcome',
    });
    return toAnswer(after, now);
  });
  deps.jobs.kick();
  return answer;
}

export async function denyAccessRequest(
  ctx: Ctx,
  input: { projectId: string; requestId: string; reason?: string | undefined },
): Promise<AccessRequest> {
  const { deps } = ctx;
  const { access, row } = await decidable(ctx, input.projectId, input.requestId, 'deny');
  const now = deps.clock.now();
  const reason = input.reason?.trim() || null;
  const answer = await deps.db.transaction().execute(async (trx) => {
    await closePending(
      trx,
      row.id,
      { status: 'denied', decided_by: ctx.principal.userId, decision_reason: reason },
      now,
    );
    const after = await loadRequest(trx, access.project.id, row.id);
    await recordChange(trx, ctx, {
      action: 'access.deny',
      projectId: access.project.id,
      targetEnv: row.env,
      detail: { requestId: row.id, userId: row.requester_id, permission: row.permission },
      event: { keys: [], access: accessEvent(after, now) },
    });
    await mail(trx, ctx, {
      to: row.requester_email,
      subject: `Your access request to ${access.project.name} / ${row.env} was denied`,
      text:
        `${ctx.principal.actorName} denied your request for ${row.permission} access to the environment "${row.env}" of the project "${access.project.name}".\n` +
        (reason ? `\nReason: ${reason}\n` : ''),
      kind: 'access_request_outcome',
    });
    return toAnswer(after, now);
  });
  deps.jobs.kick();
  return answer;
}

export async function withdrawAccessRequest(
  ctx: Ctx,
  input: { projectId: string; requestId: string },
): Promise<AccessRequest> {
  const { deps } = ctx;
  const access = await authorizeProject(ctx, input.projectId, 'visible');
  const row = await loadRequest(deps.db, access.project.id, input.requestId);
  if (row.requester_id !== ctx.principal.userId) throw forbidden('only the person who asked may withdraw a request');
  const now = deps.clock.now();
  requirePending(row, now);
  const answer = await deps.db.transaction().execute(async (trx) => {
    await closePending(trx, row.id, { status: 'withdrawn' }, now);
    const after = await loadRequest(trx, access.project.id, row.id);
    await recordChange(trx, ctx, {
      action: 'access.withdraw',
      projectId: access.project.id,
      targetEnv: row.env,
      detail: { requestId: row.id, userId: row.requester_id, permission: row.permission },
      event: { keys: [], access: accessEvent(after, now) },
    });
    return toAnswer(after, now);
  });
  deps.jobs.kick();
  return answer;
}

/** Moves a request out of `pending` once: a concurrent decision finds it decided (409), not decided twice. */
async function closePending(
  trx: Db,
  id: string,
  set: Partial<Pick<Row, 'status' | 'decided_by' | 'decision_reason' | 'granted_seconds'>>,
  now: Date,
): Promise<void> {
  const cutoff = new Date(now.getTime() - REQUEST_PENDING_MS).toISOString();
  const res = await trx
    .updateTable('access_requests')
    .set({ ...set, decided_at: now.toISOString() })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('created_at', '>', cutoff)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) throw new AppError('CONFLICT', 'this access request was decided meanwhile');
}

/**
 * The workspace's Owners and the project's Admins, whose grants still hold, but not the requester: who is
 * asked (D74), by email.
 */
async function approvers(trx: Db, access: ProjectAccess, now: Date): Promise<{ email: string }[]> {
  const { workspaceId, userId } = access.principal;
  const rows = await trx
    .selectFrom('workspace_members as wm')
    .innerJoin('users as u', 'u.id', 'wm.user_id')
    .leftJoin('project_members as pm', (j) =>
      j.onRef('pm.user_id', '=', 'wm.user_id').on('pm.project_id', '=', access.project.id),
    )
    .select(['u.id', 'u.email', 'wm.ws_role', 'wm.expires_at as ws_expires_at', 'pm.role', 'pm.expires_at'])
    .where('wm.workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('wm.ws_role', '=', 'Owner'), eb('pm.role', '=', 'Admin')]))
    .execute();
  const out = new Map<string, string>();
  for (const r of rows) {
    const wsRole = liveWsRole(r.ws_role, r.ws_expires_at, now);
    const admin = wsRole !== null && r.role === 'Admin' && grantLive(r.expires_at, now);
    if (r.id !== userId && (wsRole === 'Owner' || admin)) out.set(r.id, r.email);
  }
  return [...out.values()].map((email) => ({ email }));
}

/** The webhook payload's `access` part (ADR 0027): enough to route a request to a chat channel, no secret. */
function accessEvent(r: ListedRow, now: Date) {
  const a = toAnswer(r, now);
  return {
    requestId: a.id,
    status: a.status,
    userId: a.requesterId,
    userName: a.requesterName,
    permission: a.permission,
    durationSeconds: a.durationSeconds,
    reason: a.reason,
    ...(a.grantExpiresAt ? { expiresAt: a.grantExpiresAt } : {}),
  };
}

export function describeDuration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
  if (seconds % 60 === 0) return `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}

async function mail(trx: Db, ctx: Ctx, msg: MailMessage): Promise<void> {
  await ctx.deps.jobs.enqueue(trx, { kind: EMAIL_JOB, payload: msg });
}
