import type { AuditStream } from '@svcenv/contract';
import { sql } from 'kysely';
import { auditIdIs } from '../../db/audit-keys.js';
import { auditIdHighWater } from '../../jobs/audit-streams.js';
import { notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { newWebhookSecret, sealStreamSecret } from '../../lib/webhook-signing.js';
import { requireOwner, requireUser } from '../core/authz.js';
import { recordChange } from '../core/changes.js';
import type { Ctx } from '../core/context.js';
import type { Principal } from '../core/principal.js';
import { checkUrl } from './webhooks.js';

/**
 * D65: audit streams, managed by Owners with a dashboard session (like webhooks, D10). The delivery is
 * jobs/audit-streams.ts (ADR 0024).
 */
function requireStreamAdmin(principal: Principal): void {
  requireUser(principal);
  requireOwner(principal);
}

/** Audit detail: never the secret, and of the URL only its host (a path or query may hold a credential). */
const auditDetail = (row: { id: string; url: string }) => ({ streamId: row.id, host: new URL(row.url).host });

export async function listAuditStreams(ctx: Ctx): Promise<AuditStream[]> {
  const { deps, principal } = ctx;
  requireStreamAdmin(principal);
  await deps.flushAuditInbox(); // `pending` counts the inbox's entries too
  const rows = await deps.db
    .selectFrom('audit_streams as s')
    .select(['s.id', 's.url', 's.cursor', 's.last_status', 's.last_delivered_at', 's.created_at'])
    .select((eb) =>
      eb
        .selectFrom('audit_logs as a')
        .select(sql<number>`count(*)`.as('n'))
        // audit_logs_ws_id's key (db/audit-keys.ts).
        .where(auditIdIs(deps.dialect, 'a.workspace_id', sql.ref('s.workspace_id')))
        .whereRef('a.id', '>', 's.cursor')
        .as('pending'),
    )
    .where('s.workspace_id', '=', principal.workspaceId)
    .orderBy('s.created_at')
    .orderBy('s.id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    url: r.url,
    createdAt: r.created_at,
    lastDeliveredId: r.last_delivered_at === null ? null : Number(r.cursor),
    lastStatus: r.last_status,
    lastDeliveredAt: r.last_delivered_at,
    pending: Number(r.pending ?? 0),
  }));
}

/**
 * The stream starts after the highest audit id handed out when it is created, read in the transaction that
 * creates it (on SQLite under the write lock): its own `audit_stream.create` entry is the first it sends.
 */
export async function createAuditStream(ctx: Ctx, input: { url: string }) {
  const { deps, principal } = ctx;
  requireStreamAdmin(principal);
  const url = await checkUrl(deps, input.url);
  const id = newId();
  const secret = newWebhookSecret();
  const now = deps.clock.now().toISOString();
  // Entries written before the stream was created are in audit_logs, below the high water read next: the
  // inbox's rows would otherwise take ids above it when moved (ADR 0007, eighth round).
  await deps.flushAuditInbox();
  await deps.db.transaction().execute(async (trx) => {
    const row = {
      id,
      workspace_id: principal.workspaceId,
      url,
      secret_sealed: sealStreamSecret(deps.webhooks.secretKey, id, secret),
      cursor: await auditIdHighWater(trx, deps.dialect),
      next_attempt_at: now,
      created_at: now,
    };
    await trx.insertInto('audit_streams').values(row).execute();
    await recordChange(trx, ctx, { action: 'audit_stream.create', detail: auditDetail(row) });
  });
  return { id, url, secret, createdAt: now };
}

/** Its batch in flight, if any, still ends; nothing is sent after (the cursor update finds no row). */
export async function deleteAuditStream(ctx: Ctx, input: { id: string }): Promise<void> {
  const { deps, principal } = ctx;
  requireStreamAdmin(principal);
  await deps.db.transaction().execute(async (trx) => {
    const row = await trx
      .deleteFrom('audit_streams')
      .where('id', '=', input.id)
      .where('workspace_id', '=', principal.workspaceId)
      .returning(['id', 'url'])
      .executeTakeFirst();
    if (!row) throw notFound('audit stream');
    await recordChange(trx, ctx, { action: 'audit_stream.delete', detail: auditDetail(row) });
  });
}
