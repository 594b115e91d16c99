import type { AuditEntry } from '@svcenv/contract';
import type { Db } from './index.js';

/**
 * Audit rows as the API shows them (D36, ADR 0015), in one place for the audit endpoints
 * (services/core/audit.ts) and the audit streams (jobs/audit-streams.ts, D65: "each entry exactly as the
 * audit endpoints show it"). Each entry names its actor as D34 does: the user's name, `token:<name>` or
 * `identity:<name>` (D60), and its project by name and slug, by left joins, so a page costs one query whatever
 * its length.
 */
export function selectAuditEntries(db: Db) {
  return (
    db
      .selectFrom('audit_logs as a')
      .leftJoin('users as u', (j) => j.onRef('u.id', '=', 'a.actor_id').on('a.actor_type', '=', 'user'))
      .leftJoin('access_tokens as t', (j) => j.onRef('t.id', '=', 'a.actor_id').on('a.actor_type', '=', 'token'))
      // D60: a token issued to a workload identity acts as the identity (actor id: the identity's id).
      .leftJoin('workload_identities as wi', (j) =>
        j.onRef('wi.id', '=', 'a.actor_id').on('a.actor_type', '=', 'token'),
      )
      .leftJoin('projects as p', 'p.id', 'a.project_id')
      .selectAll('a')
      .select([
        'u.name as user_name',
        't.name as token_name',
        'wi.name as identity_name',
        'p.name as project_name',
        'p.slug as project_slug',
      ])
  );
}

type AuditEntryRow = Awaited<ReturnType<ReturnType<typeof selectAuditEntries>['executeTakeFirstOrThrow']>>;

export function presentAuditEntry(r: AuditEntryRow): AuditEntry {
  return {
    id: Number(r.id),
    action: r.action,
    targetKey: r.target_key,
    targetEnv: r.target_env,
    actorId: r.actor_id,
    actorType: r.actor_type,
    actorName:
      r.user_name ??
      (r.token_name !== null
        ? `token:${r.token_name}`
        : r.identity_name !== null
          ? `identity:${r.identity_name}`
          : null),
    detail: r.detail === null ? null : JSON.parse(r.detail),
    createdAt: r.created_at,
    project:
      r.project_id === null || r.project_name === null
        ? null
        : { id: r.project_id, name: r.project_name, slug: r.project_slug ?? r.project_id },
  };
}

/** The detail fields that hold a person's id: memberships (D22, D36) and a change request's author (D47). */
const PERSON_FIELDS = ['userId', 'author'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function personIds(detail: unknown): string[] {
  if (typeof detail !== 'object' || detail === null) return [];
  const d = detail as Record<string, unknown>;
  return PERSON_FIELDS.map((f) => d[f]).filter((v): v is string => typeof v === 'string' && UUID.test(v));
}

/**
 * The entries of one page or batch, each with `detailNames` when its detail names people by id (who was added,
 * removed, given a permission; whose change request was approved), so that a log reads as names. One query by
 * primary key for the whole page, and none when the page names nobody (a page of pulls costs nothing more).
 * A removed member keeps their name: the user row outlives the membership.
 */
export async function presentAuditEntries(db: Db, rows: readonly AuditEntryRow[]): Promise<AuditEntry[]> {
  const entries = rows.map(presentAuditEntry);
  const ids = new Set(entries.flatMap((e) => personIds(e.detail)));
  if (ids.size === 0) return entries;
  const users = await db
    .selectFrom('users')
    .select(['id', 'name'])
    .where('id', 'in', [...ids])
    .execute();
  const names = new Map(users.map((u) => [u.id, u.name]));
  return entries.map((e) => {
    const named = personIds(e.detail).filter((id) => names.has(id));
    return named.length === 0 ? e : { ...e, detailNames: Object.fromEntries(named.map((id) => [id, names.get(id)!])) };
  });
}
