import { type ChangeRequest, type ChangeRequestStatus, MASK } from '@svcenv/contract';
import type { Selectable } from 'kysely';
import type { Db } from '../../db/index.js';
import type { ChangeRequestItemsTable, ChangeRequestsTable } from '../../db/schema.js';
import { EMAIL_JOB } from '../../jobs/email.js';
import { AppError, forbidden, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import type { MailMessage } from '../../lib/mail.js';
import {
  authorizeEnv,
  type EnvFull,
  type EnvTarget,
  type ProjectAccess,
  readNeed,
  requireApprover,
} from '../core/authz.js';
import { checkRevision, recordChange, recordRead } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import { emitEvent } from '../core/events.js';
import { decryptFailed, type EnvSealer, envSealer, type VarType } from '../core/values.js';
import { refuseUnresolved } from './references.js';
import { type EnvChangeKeys, writeEnvChanges } from './variables.js';

/**
 * D47 change requests: a proposed change to one environment (values to set, keys to delete), opened by anyone
 * with write permission on it, applied as one revision when an Owner or project Admin other than its author
 * approves it. The approval rule for direct writes lives in authz.ts (requireDirectWrite); the write itself is
 * the bulk upsert's (variables.ts writeEnvChanges). Proposed values are sealed by the project key in their own
 * role, bound to the request, and are shown masked as in listings.
 */
type RequestTarget = EnvTarget & { requestId: string };

type RequestRow = Selectable<ChangeRequestsTable>;
type ItemRow = Selectable<ChangeRequestItemsTable>;

/** A proposed value's sealing location: the key within its request, so a value cannot move to another request. */
const itemLocation = (requestId: string, key: string) => `${requestId}/${key}`;

function openItem(sealer: EnvSealer, requestId: string, item: ItemRow): string {
  try {
    return sealer.open(itemLocation(requestId, item.key), item.value_sealed ?? '', 'change-request');
  } catch (e) {
    // The sealing location is internal; the error names the variable.
    if (e instanceof AppError && e.code === 'DECRYPT_FAILED') throw decryptFailed(item.key);
    throw e;
  }
}

function present(row: RequestRow, env: EnvFull, items: ItemRow[], sealer: EnvSealer, reveal: boolean): ChangeRequest {
  return {
    id: row.id,
    status: row.status,
    env: env.name,
    baseRevision: Number(row.base_revision),
    author: row.author_name,
    authorId: row.author_id,
    message: row.message,
    createdAt: row.created_at,
    changes: items.map((i) => ({
      key: i.key,
      op: i.op,
      type: i.type,
      // Spec variables rule 1, D26: secrets masked unless revealed (which needs write permission).
      value: i.op === 'delete' ? '' : i.type === 'secret' && !reveal ? MASK : openItem(sealer, row.id, i),
      ...(i.expires_at !== null ? { expiresAt: i.expires_at } : {}),
    })),
    ...(row.closed_by !== null ? { closedBy: row.closed_by } : {}),
    ...(row.closed_at !== null ? { closedAt: row.closed_at } : {}),
    ...(row.applied_revision !== null ? { appliedRevision: Number(row.applied_revision) } : {}),
    ...(row.reason !== null ? { reason: row.reason } : {}),
  };
}

async function itemsOf(db: Db, ids: string[]): Promise<Map<string, ItemRow[]>> {
  const out = new Map<string, ItemRow[]>(ids.map((id) => [id, []]));
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('change_request_items')
      .selectAll()
      .where('change_request_id', 'in', ids.slice(i, i + 500))
      .orderBy('change_request_id')
      .orderBy('position')
      .execute();
    for (const r of rows) out.get(r.change_request_id)!.push(r);
  }
  return out;
}

/** The request in this environment (404 otherwise); in a transaction on PostgreSQL, locked. */
async function findRequest(trx: Db, ctx: Ctx, env: EnvFull, requestId: string, lock = false): Promise<RequestRow> {
  let q = trx
    .selectFrom('change_requests')
    .selectAll()
    .where('id', '=', requestId)
    .where('environment_id', '=', env.id);
  if (lock && ctx.deps.dialect === 'postgres') q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row) throw notFound(`change request ${requestId}`);
  return row;
}

const requireOpen = (row: RequestRow) => {
  if (row.status !== 'open') throw new AppError('CONFLICT', `this change request is already ${row.status}`, 'status');
};

async function auditReveal(ctx: Ctx, target: EnvTarget, detail: Record<string, unknown>): Promise<void> {
  await recordRead(ctx, { action: 'var.reveal', projectId: target.projectId, targetEnv: target.env, detail });
}

/** D47: opens a change request; needs the write permission a direct write would need, approval or not. */
export async function openChangeRequest(
  ctx: Ctx,
  input: EnvTarget & {
    message: string;
    set: { key: string; value: string; type?: VarType | undefined; expiresAt?: string | undefined }[];
    delete: string[];
    reveal: boolean;
    ifRevision?: number | undefined;
    /** D67: refuse `set` values whose references would not resolve for the author, the request applied. */
    validate?: boolean | undefined;
  },
): Promise<ChangeRequest & { revision: number }> {
  const seen = new Set<string>();
  for (const [i, item] of input.set.entries()) {
    if (seen.has(item.key)) throw new AppError('VALIDATION', `duplicate key "${item.key}"`, `set.${i}.key`);
    seen.add(item.key);
  }
  for (const [i, key] of input.delete.entries()) {
    if (seen.has(key)) throw new AppError('VALIDATION', `key "${key}" is named twice`, `delete.${i}`);
    seen.add(key);
  }
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'write' });
  if (input.validate) await refuseUnresolved(ctx, access, [{ env, set: input.set, delete: input.delete }]);
  const sealer = envSealer(ctx.deps.keyring, access, env);
  const { deps, principal } = ctx;
  const id = newId();
  const now = deps.clock.now().toISOString();
  const result = await deps.db.transaction().execute(async (trx) => {
    // The revision the request is based on: the one If-Match named (checked, and locked on PostgreSQL), or else
    // the environment's current one.
    const baseRevision =
      (await checkRevision(trx, deps, env.id, input.ifRevision)) ??
      Number(
        (await trx.selectFrom('environments').select('revision').where('id', '=', env.id).executeTakeFirstOrThrow())
          .revision,
      );
    const touched = [...seen];
    const existing = new Map<string, VarType>();
    for (let i = 0; i < touched.length; i += 500) {
      const rows = await trx
        .selectFrom('variables')
        .select(['key', 'type'])
        .where('environment_id', '=', env.id)
        .where('key', 'in', touched.slice(i, i + 500))
        .execute();
      for (const r of rows) existing.set(r.key, r.type);
    }
    // A delete of a key that is not there would change nothing: the request would promise what it cannot do.
    for (const [i, key] of input.delete.entries()) {
      if (!existing.has(key)) throw new AppError('NOT_FOUND', `variable "${key}" not found`, `delete.${i}`);
    }
    const row: RequestRow = {
      id,
      environment_id: env.id,
      status: 'open',
      base_revision: baseRevision,
      author_id: principal.userId,
      author_name: principal.actorName,
      message: input.message,
      created_at: now,
      closed_by: null,
      closed_at: null,
      applied_revision: null,
      reason: null,
    };
    await trx.insertInto('change_requests').values(row).execute();
    const items: ItemRow[] = [
      ...input.set.map((s) => ({
        change_request_id: id,
        position: 0,
        key: s.key,
        op: 'set' as const,
        // Without a type: the variable's own, or secret for a new key (as the bulk upsert's default).
        type: s.type ?? existing.get(s.key) ?? 'secret',
        value_sealed: sealer.seal(itemLocation(id, s.key), s.value, 'change-request'),
        expires_at: s.expiresAt === undefined ? null : new Date(s.expiresAt).toISOString(),
      })),
      ...input.delete.map((key) => ({
        change_request_id: id,
        position: 0,
        key,
        op: 'delete' as const,
        type: existing.get(key)!,
        value_sealed: null,
        expires_at: null,
      })),
    ].map((item, position) => ({ ...item, position }));
    for (let i = 0; i < items.length; i += 500) {
      await trx
        .insertInto('change_request_items')
        .values(items.slice(i, i + 500))
        .execute();
    }
    const setKeys = input.set.map((s) => s.key);
    await recordChange(trx, ctx, {
      action: 'change_request.open',
      projectId: input.projectId,
      targetEnv: env.name,
      detail: { changeRequest: id, baseRevision: row.base_revision, set: setKeys, delete: input.delete },
      event: { keys: [...setKeys, ...input.delete] },
    });
    const count = items.length === 1 ? '1 change' : `${items.length} changes`;
    for (const approver of await approvers(trx, access, env)) {
      await mail(trx, ctx, {
        to: approver.email,
        subject: `Approval requested: ${count} to ${access.project.name} / ${env.name}`,
        text:
          `${principal.actorName} asks to change the environment "${env.name}" of the project "${access.project.name}".\n\n` +
          `Message: ${input.message}\n\n${describeKeys(setKeys, input.delete)}\n` +
          `Approve or reject it in the dashboard: ${projectLink(ctx, input.projectId)}\n`,
        kind: 'change_request_approval',
      });
    }
    return { row, items, revision: row.base_revision };
  });
  deps.jobs.kick();
  return { ...present(result.row, env, result.items, sealer, input.reveal), revision: result.revision };
}

/** D47: the environment's change requests, newest first, optionally of one status. */
export async function listChangeRequests(
  ctx: Ctx,
  input: EnvTarget & { status?: ChangeRequestStatus | undefined; reveal: boolean },
): Promise<ChangeRequest[]> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: readNeed(input.reveal) });
  let q = ctx.deps.db.selectFrom('change_requests').selectAll().where('environment_id', '=', env.id);
  if (input.status !== undefined) q = q.where('status', '=', input.status);
  const rows = await q.orderBy('created_at', 'desc').orderBy('id').execute();
  const items = await itemsOf(
    ctx.deps.db,
    rows.map((r) => r.id),
  );
  if (input.reveal) await auditReveal(ctx, input, { changeRequests: true });
  const sealer = envSealer(ctx.deps.keyring, access, env);
  return rows.map((r) => present(r, env, items.get(r.id)!, sealer, input.reveal));
}

export async function getChangeRequest(ctx: Ctx, input: RequestTarget & { reveal: boolean }): Promise<ChangeRequest> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: readNeed(input.reveal) });
  const row = await findRequest(ctx.deps.db, ctx, env, input.requestId);
  const items = await itemsOf(ctx.deps.db, [row.id]);
  if (input.reveal) await auditReveal(ctx, input, { changeRequest: row.id });
  return present(row, env, items.get(row.id)!, envSealer(ctx.deps.keyring, access, env), input.reveal);
}

/**
 * D47: an Owner or project Admin other than the author applies every change in one transaction and one
 * revision (audit action `change_request.approve`, webhook event `change_request.apply`), unless a key it
 * touches changed after its base revision (409 CONFLICT, the request stays open).
 */
export async function approveChangeRequest(
  ctx: Ctx,
  input: RequestTarget,
): Promise<ChangeRequest & { revision: number }> {
  const { deps, principal } = ctx;
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'visible' });
  requireApprover(access, env);
  const sealer = envSealer(deps.keyring, access, env);
  const now = deps.clock.now().toISOString();
  const result = await deps.db.transaction().execute(async (trx) => {
    // Approvals of one environment one at a time (the row lock on PostgreSQL; SQLite has one writer), so the
    // conflict check below and the write it allows see the same history.
    if (deps.dialect === 'postgres') {
      await trx.selectFrom('environments').select('id').where('id', '=', env.id).forUpdate().execute();
    }
    const row = await findRequest(trx, ctx, env, input.requestId, true);
    requireNotAuthor(ctx, row, 'approve');
    requireOpen(row);
    const items = (await itemsOf(trx, [row.id])).get(row.id)!;
    const keys = items.map((i) => i.key);
    const changed = new Set<string>();
    for (let i = 0; i < keys.length; i += 500) {
      const rows = await trx
        .selectFrom('variable_history')
        .select('key')
        .distinct()
        .where('environment_id', '=', env.id)
        .where('key', 'in', keys.slice(i, i + 500))
        .where('revision', '>', row.base_revision)
        .execute();
      for (const r of rows) changed.add(r.key);
    }
    if (changed.size > 0) {
      const list = [...changed].sort();
      throw new AppError(
        'CONFLICT',
        `changed since revision ${row.base_revision}: ${list.join(', ')}; open a new change request`,
        'baseRevision',
      );
    }
    const set = items
      .filter((i) => i.op === 'set')
      .map((i) => ({
        key: i.key,
        value: openItem(sealer, row.id, i),
        type: i.type,
        ...(i.expires_at !== null ? { expiresAt: i.expires_at } : {}),
      }));
    const del = items.filter((i) => i.op === 'delete').map((i) => i.key);
    const applied = await writeEnvChanges(trx, ctx, sealer, env, { set, delete: del }, (k: EnvChangeKeys) => ({
      action: 'change_request.approve',
      projectId: input.projectId,
      targetEnv: env.name,
      detail: { changeRequest: row.id, author: row.author_id, ...k },
    }));
    const touched = [...applied.created, ...applied.updated, ...applied.deleted];
    await emitEvent(deps, trx, principal, 'change_request.apply', input.projectId, env.name, {
      keys: touched,
      created: applied.created,
      updated: applied.updated,
    });
    const revision = applied.revision ?? Number(env.revision);
    const closed = {
      status: 'applied' as const,
      closed_by: principal.actorName,
      closed_at: now,
      applied_revision: revision,
    };
    await trx.updateTable('change_requests').set(closed).where('id', '=', row.id).execute();
    await mailAuthor(
      trx,
      ctx,
      row,
      access,
      env,
      'approved and applied',
      `It is revision ${revision} of the environment.`,
    );
    return { row: { ...row, ...closed }, items, revision };
  });
  deps.jobs.kick();
  return { ...present(result.row, env, result.items, sealer, false), revision: result.revision };
}

/** D47: the same approvers close it as `rejected`, with an optional reason for its author. */
export async function rejectChangeRequest(
  ctx: Ctx,
  input: RequestTarget & { reason?: string | undefined },
): Promise<ChangeRequest> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'visible' });
  requireApprover(access, env);
  const reason = input.reason === undefined || input.reason === '' ? null : input.reason;
  return closeRequest(ctx, input, access, env, {
    status: 'rejected',
    reason,
    guard: (row) => requireNotAuthor(ctx, row, 'reject'),
    notify: (trx, row) =>
      mailAuthor(trx, ctx, row, access, env, 'rejected', reason === null ? '' : `Reason: ${reason}`),
  });
}

/** D47: its author closes it as `withdrawn` while it is open (with the write permission that opened it). */
export async function withdrawChangeRequest(ctx: Ctx, input: RequestTarget): Promise<void> {
  const { access, env } = await authorizeEnv(ctx, { ...input, need: 'write' });
  await closeRequest(ctx, input, access, env, {
    status: 'withdrawn',
    reason: null,
    guard: (row) => {
      if (row.author_id !== ctx.principal.userId) throw forbidden('only its author withdraws a change request');
    },
    // The author closed it: no email to tell them so.
    notify: async () => {},
  });
}

async function closeRequest(
  ctx: Ctx,
  input: RequestTarget,
  access: ProjectAccess,
  env: EnvFull,
  close: {
    status: 'rejected' | 'withdrawn';
    reason: string | null;
    /** Who may close it (403), checked before its state (409). */
    guard: (row: RequestRow) => void;
    notify: (trx: Db, row: RequestRow) => Promise<void>;
  },
): Promise<ChangeRequest> {
  const { deps, principal } = ctx;
  const now = deps.clock.now().toISOString();
  const result = await deps.db.transaction().execute(async (trx) => {
    const row = await findRequest(trx, ctx, env, input.requestId, true);
    close.guard(row);
    requireOpen(row);
    const closed = { status: close.status, closed_by: principal.actorName, closed_at: now, reason: close.reason };
    await trx.updateTable('change_requests').set(closed).where('id', '=', row.id).execute();
    await recordChange(trx, ctx, {
      action: close.status === 'rejected' ? 'change_request.reject' : 'change_request.withdraw',
      projectId: input.projectId,
      targetEnv: env.name,
      // The reason is free text for the author: it goes to them, not to the audit log.
      detail: { changeRequest: row.id },
    });
    await close.notify(trx, row);
    return { row: { ...row, ...closed }, items: (await itemsOf(trx, [row.id])).get(row.id)! };
  });
  deps.jobs.kick();
  return present(result.row, env, result.items, envSealer(deps.keyring, access, env), false);
}

function requireNotAuthor(ctx: Ctx, row: RequestRow, what: 'approve' | 'reject'): void {
  if (row.author_id === ctx.principal.userId) {
    throw forbidden(
      what === 'approve'
        ? 'the author of a change request cannot approve it'
        : 'the author of a change request withdraws it (DELETE) rather than rejecting it',
    );
  }
}

/**
 * Who is asked to approve: the workspace's Owners and the project's Admins who may write to the environment
 * (requireApprover), but not the author.
 */
async function approvers(trx: Db, access: ProjectAccess, env: EnvFull): Promise<{ email: string }[]> {
  const { workspaceId, userId } = access.principal;
  const owners = await trx
    .selectFrom('workspace_members as wm')
    .innerJoin('users as u', 'u.id', 'wm.user_id')
    .select(['u.id', 'u.email'])
    .where('wm.workspace_id', '=', workspaceId)
    .where('wm.ws_role', '=', 'Owner')
    .execute();
  const admins = await trx
    .selectFrom('project_members as pm')
    .innerJoin('users as u', 'u.id', 'pm.user_id')
    .innerJoin('workspace_members as wm', (j) =>
      j.onRef('wm.user_id', '=', 'pm.user_id').on('wm.workspace_id', '=', workspaceId),
    )
    .leftJoin('env_permissions as ep', (j) =>
      j
        .onRef('ep.user_id', '=', 'pm.user_id')
        .onRef('ep.project_id', '=', 'pm.project_id')
        .on('ep.environment_id', '=', env.id),
    )
    .select(['u.id', 'u.email', 'ep.permission'])
    .where('pm.project_id', '=', access.project.id)
    .where('pm.role', '=', 'Admin')
    .execute();
  const out = new Map<string, string>();
  for (const o of owners) out.set(o.id, o.email);
  for (const a of admins) if (a.permission === null || a.permission === 'write') out.set(a.id, a.email);
  out.delete(userId);
  return [...out.values()].map((email) => ({ email }));
}

/** Closing emails the author (unless the author closed it). Never a value: keys and the outcome only. */
async function mailAuthor(
  trx: Db,
  ctx: Ctx,
  row: RequestRow,
  access: ProjectAccess,
  env: EnvFull,
  outcome: string,
  extra: string,
): Promise<void> {
  if (row.author_id === ctx.principal.userId) return;
  const author = await trx.selectFrom('users').select('email').where('id', '=', row.author_id).executeTakeFirst();
  if (!author) return;
  await mail(trx, ctx, {
    to: author.email,
    subject: `Your change request to ${access.project.name} / ${env.name} was ${outcome.split(' ')[0]}`,
    text:
      `${ctx.principal.actorName} ${outcome} your change request to the environment "${env.name}" of the project "${access.project.name}".\n\n` +
      `Your message: ${row.message}\n${extra ? `\n${extra}\n` : ''}\n${projectLink(ctx, access.project.id)}\n`,
    kind: 'change_request_outcome',
  });
}

const projectLink = (ctx: Ctx, projectId: string) => `${ctx.deps.config.publicUrl}/projects/${projectId}`;

function describeKeys(set: string[], del: string[]): string {
  return [
    ...(set.length > 0 ? [`Set: ${set.join(', ')}`] : []),
    ...(del.length > 0 ? [`Delete: ${del.join(', ')}`] : []),
  ].join('\n');
}

/** Email as a job in the caller's transaction (jobs/email.ts), sent after the commit. */
async function mail(trx: Db, ctx: Ctx, msg: MailMessage): Promise<void> {
  await ctx.deps.jobs.enqueue(trx, { kind: EMAIL_JOB, payload: msg });
}
