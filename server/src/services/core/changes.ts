import type { WebhookEvent } from '@svcenv/contract';
import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { REVISIONS_CHANNEL } from '../../db/notify.js';
import { AppError } from '../../lib/errors.js';
import { type AuditEvent, auditRow, recordAudit } from './audit.js';
import type { Ctx } from './context.js';
import { type EventDetail, emitEvent } from './events.js';

/**
 * Every write of the API ends in one `recordChange` call inside its transaction: the audit row (D36), the
 * webhook event when the action is one (D34), and, when variables changed, the environment's next revision
 * (D44: its number, who, what action and which keys; the pull caches are keyed on it). So a committed change
 * always has all of them, a rolled-back one none, and a new kind of write needs one call.
 */
export type Change = AuditEvent & {
  /** The environment whose variables changed, and how: it gets its next revision. */
  revision?: RevisionKeys | undefined;
} & (
    | { event?: undefined }
    | {
        /** Webhook payload details; the event is named like the audit action and needs projectId and targetEnv. */
        event: EventDetail;
        action: WebhookEvent;
        projectId: string;
        targetEnv: string;
      }
  );

export interface RevisionKeys {
  envId: string;
  created: string[];
  updated: string[];
  deleted: string[];
}

/** Records the change; returns the environment's new revision when it made one (else null). */
export async function recordChange(
  trx: Db,
  ctx: Pick<Ctx, 'deps' | 'principal'>,
  change: Change,
): Promise<number | null> {
  const { deps, principal } = ctx;
  const { revision: keys, event, ...audit } = change;
  let revision: number | null = null;
  if (keys !== undefined) {
    // The row update serialises writers of one environment (a row lock on PostgreSQL, the one writer on
    // SQLite), so revision numbers have no gaps and no duplicates.
    const row = await trx
      .updateTable('environments')
      .set((eb) => ({ revision: eb('revision', '+', 1) }))
      .where('id', '=', keys.envId)
      .returning('revision')
      .executeTakeFirstOrThrow();
    revision = Number(row.revision);
    // D43: held pulls of every instance wake when this commits (on SQLite, one instance, they poll).
    if (deps.dialect === 'postgres') await sql`select pg_notify(${REVISIONS_CHANNEL}, ${keys.envId})`.execute(trx);
    await trx
      .insertInto('env_revisions')
      .values({
        environment_id: keys.envId,
        revision,
        action: change.action,
        actor_id: principal.actorId,
        actor_type: principal.kind,
        actor_name: principal.actorName,
        created: JSON.stringify(keys.created),
        updated: JSON.stringify(keys.updated),
        deleted: JSON.stringify(keys.deleted),
        created_at: deps.clock.now().toISOString(),
      })
      .execute();
  }
  await recordAudit(trx, auditRow(deps.clock, principal, audit));
  if (event) await emitEvent(deps, trx, principal, change.action, change.projectId, change.targetEnv, event);
  return revision;
}

/**
 * D46: a write sent with `If-Match: "rev:<n>"` does nothing unless the environment is still at revision n.
 * Called first in the write's transaction; on PostgreSQL it locks the environment row (FOR UPDATE) so that no
 * other writer moves the revision between this check and this write's own bump. Returns n, or undefined
 * when the write named no revision.
 */
export async function checkRevision(
  trx: Db,
  deps: Pick<Ctx['deps'], 'dialect'>,
  envId: string,
  expected: number | undefined,
): Promise<number | undefined> {
  if (expected === undefined) return undefined;
  let q = trx.selectFrom('environments').select('revision').where('id', '=', envId);
  if (deps.dialect === 'postgres') q = q.forUpdate();
  const row = await q.executeTakeFirstOrThrow();
  if (Number(row.revision) !== expected) {
    throw new AppError(
      'PRECONDITION_FAILED',
      `the environment changed since revision ${expected} (it is at ${row.revision}); compare again`,
      'revision',
    );
  }
  return expected;
}

/**
 * A read that is audited (reveal, pull, export): its row goes to the group commit (services/core/audit.ts), so
 * it is durable before the answer without a transaction of its own.
 */
export function recordRead(ctx: Pick<Ctx, 'deps' | 'principal'>, event: AuditEvent): Promise<void> {
  return ctx.deps.auditBatcher.append(auditRow(ctx.deps.clock, ctx.principal, event));
}
