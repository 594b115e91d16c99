import type { Db } from '../db/index.js';
import { type Clock, DAY_MS } from '../lib/clock.js';
import type { MailMessage } from '../lib/mail.js';
import { EMAIL_JOB } from './email.js';
import type { JobQueue } from './queue.js';

/**
 * D37 expiry reminders: every workspace Owner gets one email listing the variables (project, environment,
 * key; never values) that expire within 7 days or have expired and are still present, at most once per
 * 24 hours per workspace.
 *
 * Every instance runs the scan (JobQueue.every); the once-per-day rule holds across instances because a
 * workspace's send is claimed by one conditional upsert on `expiry_reminders`, in the same transaction as
 * the email jobs it writes: exactly one claimant commits both, and a crash leaves neither.
 */
export const EXPIRY_SCAN_EVERY_MS = 15 * 60 * 1000;
export const REMINDER_HORIZON_MS = 7 * DAY_MS;
export const REMINDER_PERIOD_MS = DAY_MS;
/** Lines listed in one email; the rest are counted. */
const MAX_LINES = 200;

export interface ExpiryReminderDeps {
  db: Db;
  clock: Clock;
  jobs: Pick<JobQueue, 'enqueue' | 'kick'>;
  publicUrl: string;
}

export async function scanExpiringVariables(deps: ExpiryReminderDeps): Promise<number> {
  const now = deps.clock.now();
  const horizon = new Date(now.getTime() + REMINDER_HORIZON_MS).toISOString();
  const cutoff = new Date(now.getTime() - REMINDER_PERIOD_MS).toISOString();
  const candidates = await deps.db
    .selectFrom('variables as v')
    .innerJoin('environments as e', 'e.id', 'v.environment_id')
    .innerJoin('projects as p', 'p.id', 'e.project_id')
    .leftJoin('expiry_reminders as r', 'r.workspace_id', 'p.workspace_id')
    .select('p.workspace_id')
    .distinct()
    .where('v.expires_at', 'is not', null)
    .where('v.expires_at', '<=', horizon)
    .where((eb) => eb.or([eb('r.sent_at', 'is', null), eb('r.sent_at', '<=', cutoff)]))
    .execute();
  let sent = 0;
  for (const { workspace_id } of candidates) {
    if (await remindWorkspace(deps, workspace_id, now, horizon, cutoff)) sent++;
  }
  if (sent > 0) deps.jobs.kick();
  return sent;
}

async function remindWorkspace(
  deps: ExpiryReminderDeps,
  workspaceId: string,
  now: Date,
  horizon: string,
  cutoff: string,
): Promise<boolean> {
  const nowIso = now.toISOString();
  return deps.db
    .transaction()
    .execute(async (trx) => {
      // The claim: inserts the first send, or moves a send older than 24 h; returns no row otherwise.
      const claimed = await trx
        .insertInto('expiry_reminders')
        .values({ workspace_id: workspaceId, sent_at: nowIso })
        .onConflict((oc) =>
          oc.column('workspace_id').doUpdateSet({ sent_at: nowIso }).where('expiry_reminders.sent_at', '<=', cutoff),
        )
        .returning('workspace_id')
        .executeTakeFirst();
      if (!claimed) return false;
      const vars = await trx
        .selectFrom('variables as v')
        .innerJoin('environments as e', 'e.id', 'v.environment_id')
        .innerJoin('projects as p', 'p.id', 'e.project_id')
        .select(['p.name as project', 'e.name as env', 'v.key', 'v.expires_at'])
        .where('p.workspace_id', '=', workspaceId)
        .where('v.expires_at', 'is not', null)
        .where('v.expires_at', '<=', horizon)
        .orderBy('v.expires_at')
        .orderBy('p.name')
        .orderBy('e.name')
        .orderBy('v.key')
        .execute();
      const owners = await trx
        .selectFrom('workspace_members as m')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
        .select(['u.email', 'u.name', 'w.name as workspace'])
        .where('m.workspace_id', '=', workspaceId)
        .where('m.ws_role', '=', 'Owner')
        .execute();
      // Variables deleted since the candidate query, or no Owner: the claim rolls back with nothing sent.
      if (vars.length === 0 || owners.length === 0) throw new NothingToSend();
      for (const owner of owners) {
        await deps.jobs.enqueue(trx, { kind: EMAIL_JOB, payload: reminderMail(deps.publicUrl, owner, vars, nowIso) });
      }
      return true;
    })
    .catch((e) => {
      if (e instanceof NothingToSend) return false;
      throw e;
    });
}

class NothingToSend extends Error {}

function reminderMail(
  publicUrl: string,
  owner: { email: string; name: string; workspace: string },
  vars: { project: string; env: string; key: string; expires_at: string | null }[],
  nowIso: string,
): MailMessage {
  const lines = vars.slice(0, MAX_LINES).map((v) => {
    const when = v.expires_at! <= nowIso ? 'expired' : 'expires';
    return `  ${v.project} / ${v.env} / ${v.key}  (${when} ${v.expires_at})`;
  });
  if (vars.length > MAX_LINES) lines.push(`  ... and ${vars.length - MAX_LINES} more`);
  const n = vars.length;
  return {
    to: owner.email,
    subject: `svcenv: ${n} variable${n === 1 ? '' : 's'} expiring soon in ${owner.workspace}`,
    text: [
      `Hello ${owner.name},`,
      '',
      `In the workspace "${owner.workspace}", these variables expire within 7 days or have already expired and are still present (project / environment / key):`,
      '',
      ...lines,
      '',
      `Rotate or remove them, or clear their expiry: ${publicUrl}`,
      '',
      'You receive this reminder at most once every 24 hours per workspace, as a workspace Owner.',
    ].join('\n'),
    kind: 'expiry_reminder',
  };
}
