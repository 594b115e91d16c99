import type { Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import {
  type AccessRequest,
  createAccessRequest,
  listAccessRequests,
  withdrawAccessRequest,
} from '../../api/access.js';
import { ModalForm } from '../../components/ModalForm.js';
import { useAsync, useSubmit } from '../../hooks.js';
import { envPermission } from '../../lib/access.js';
import { dateTime, relativeTime } from '../../lib/format.js';
import { DAY, HOUR, spanWords } from '../../lib/grants.js';
import { useSession } from '../../session.js';
import { useAction, useToast } from '../../toast.js';
import { Button, Field, FormError, Pill } from '../../ui.js';

type Permission = AccessRequest['permission'];

const DURATIONS = [
  { label: '1 hour', seconds: HOUR },
  { label: '4 hours', seconds: 4 * HOUR },
  { label: '1 day', seconds: DAY },
  { label: '7 days', seconds: 7 * DAY },
] as const;

/** The viewer's own requests in a project, newest first (D74: a requester lists their own; Admins see all). */
export function useMyRequests(projectId: string) {
  const { user } = useSession();
  const state = useAsync(
    () =>
      listAccessRequests(projectId)
        .then((r) => r.accessRequests.filter((a) => a.requesterId === user.id))
        .catch(() => [] as AccessRequest[]),
    [projectId, user.id],
  );
  return state;
}

/**
 * D74 where a member meets an environment they cannot open: for each, "Request access" (a small form:
 * permission, duration, reason) or, once asked, the pending request with Withdraw. `envs` are the names
 * the viewer lacks (none, or only read when `focus` asks for write). The one they tried to open (`focus`) is
 * not a line of the list but one card, its form already filled (NoAccessCard).
 */
export function RequestAccessPanel({
  project,
  envs,
  focus = null,
}: {
  project: Project;
  envs: string[];
  /** An environment the person tried to open (a link, `?env=`): said first, in its own words. */
  focus?: string | null;
}) {
  const pending = useMyRequests(project.id);
  const toast = useToast();
  const act = useAction();
  const [asking, setAsking] = useState<string | null>(null);
  const others = envs.filter((e) => e !== focus);
  if (envs.length === 0) return null;
  const mine = pending.data ?? [];
  return (
    <div class="request-access" data-testid="request-access">
      {focus && envs.includes(focus) && <NoAccessCard project={project} env={focus} requests={pending} />}
      {others.length > 0 && (
        <ul class="request-access-list">
          {others.map((env) => {
            const req = mine.find((r) => r.env === env && r.status === 'pending');
            // The last answer, when it was a no: its reason, so the person knows before asking again.
            const last = mine.find((r) => r.env === env);
            const denied = !req && last?.status === 'denied' ? last : null;
            const has = envPermission(project, env);
            return (
              <li key={env} data-env={env}>
                <span>
                  <strong>{env}</strong> <span class="muted small">you have {has === 'none' ? 'no access' : has}</span>
                </span>
                {req ? (
                  <span class="request-pending" data-testid="request-pending">
                    <Pill tone="warn">pending</Pill>
                    <span class="small" title={`Asked ${dateTime(req.createdAt)}`}>
                      {req.permission} for {spanWords(req.durationSeconds)}, asked {relativeTime(req.createdAt)}
                    </span>
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() =>
                        act(async () => {
                          await withdrawAccessRequest(project.id, req.id);
                          toast(`Request for ${env} withdrawn`);
                          await pending.reload();
                        })
                      }
                    >
                      Withdraw
                    </Button>
                  </span>
                ) : (
                  <span class="request-pending">
                    {denied && (
                      <span class="small" data-testid="request-denied">
                        <Pill tone="bad">denied</Pill> {relativeTime(denied.decidedAt)}
                        {denied.decidedByName ? ` by ${denied.decidedByName}` : ''}
                        {denied.decisionReason ? `: “${denied.decisionReason}”` : ''}
                      </span>
                    )}
                    <Button size="sm" onClick={() => setAsking(env)}>
                      Request access
                    </Button>
                  </span>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {asking && (
        <RequestAccessDialog
          project={project}
          env={asking}
          permission={envPermission(project, asking) === 'read' ? 'write' : 'read'}
          onClose={() => setAsking(null)}
          onSent={async () => {
            setAsking(null);
            toast('Request sent to the project Admins');
            await pending.reload();
          }}
        />
      )}
    </div>
  );
}

function RequestAccessDialog({
  project,
  env,
  permission: initial,
  onClose,
  onSent,
}: {
  project: Project;
  env: string;
  permission: Permission;
  onClose: () => void;
  onSent: () => Promise<void>;
}) {
  const draft = useDraft(initial);
  const { busy, error, submit } = useSubmit();
  return (
    <ModalForm
      title={`Request access to ${env}`}
      onClose={onClose}
      onSubmit={submit(async () => {
        await send(project, env, draft);
        await onSent();
      })}
      busy={busy}
      error={error}
      fields={FIELDS}
      submitLabel="Send request"
      disabled={!draft.reason.trim()}
    >
      <p class="muted small">{WHO_DECIDES}</p>
      <RequestFields draft={draft} error={error} />
    </ModalForm>
  );
}

/**
 * D74 where a member opened an environment they cannot read (a link, a tab whose access ended meanwhile):
 * one card that says so, with the request form already filled (this environment, read, 1 hour) but for the
 * reason; once asked, the pending request with Withdraw; after a no, its reason above the form.
 */
export function NoAccessCard({
  project,
  env,
  requests: pending,
}: {
  project: Project;
  env: string;
  /** The viewer's own requests in the project (useMyRequests), shared with the list beside the card. */
  requests: ReturnType<typeof useMyRequests>;
}) {
  const toast = useToast();
  const act = useAction();
  const draft = useDraft(envPermission(project, env) === 'read' ? 'write' : 'read');
  const { busy, error, submit } = useSubmit();
  const mine = pending.data ?? [];
  const req = mine.find((r) => r.env === env && r.status === 'pending');
  const last = mine.find((r) => r.env === env);
  const denied = !req && last?.status === 'denied' ? last : null;
  const titleId = `no-access-${env}`;
  return (
    <section class="card no-access-card" data-testid="no-access" data-env={env} aria-labelledby={titleId}>
      <h2 id={titleId} class="no-access-title">
        You cannot open {env}
      </h2>
      {!pending.data ? null : req ? (
        <div class="request-pending" data-testid="request-pending">
          <Pill tone="warn">pending</Pill>
          <span class="small" title={`Asked ${dateTime(req.createdAt)}`}>
            You asked for {req.permission} for {spanWords(req.durationSeconds)}, {relativeTime(req.createdAt)}; the
            project's Admins decide.
          </span>
          <Button
            size="sm"
            variant="ghost"
            onClick={() =>
              act(async () => {
                await withdrawAccessRequest(project.id, req.id);
                toast(`Request for ${env} withdrawn`);
                await pending.reload();
              })
            }
          >
            Withdraw
          </Button>
        </div>
      ) : (
        <form
          class="no-access-form"
          data-testid="request-form"
          onSubmit={submit(async () => {
            await send(project, env, draft);
            toast('Request sent to the project Admins');
            draft.setReason('');
            await pending.reload();
          })}
        >
          <p class="muted small">{WHO_DECIDES}</p>
          {denied && (
            <p class="small" data-testid="request-denied">
              <Pill tone="bad">denied</Pill> {relativeTime(denied.decidedAt)}
              {denied.decidedByName ? ` by ${denied.decidedByName}` : ''}
              {denied.decisionReason ? `: “${denied.decisionReason}”` : ''}
            </p>
          )}
          <div class="no-access-fields">
            <Field label="Environment" name="env" error={error}>
              <input class="input" name="env" value={env} readOnly />
            </Field>
            <RequestFields draft={draft} error={error} />
          </div>
          <FormError error={error} fields={[...FIELDS, 'env']} />
          <div>
            <Button type="submit" variant="primary" busy={busy} disabled={!draft.reason.trim()}>
              Send request
            </Button>
          </div>
        </form>
      )}
    </section>
  );
}

const FIELDS = ['permission', 'durationSeconds', 'reason'];
const WHO_DECIDES =
  "The project's Admins and the workspace's Owners are told; one of them approves, possibly for a shorter time. An unanswered request expires after 24 hours.";

type Draft = ReturnType<typeof useDraft>;

/** A request being written: permission (as given), 1 hour, no reason yet. */
function useDraft(initial: Permission) {
  const [permission, setPermission] = useState<Permission>(initial);
  const [seconds, setSeconds] = useState<number>(HOUR);
  const [reason, setReason] = useState('');
  return { permission, setPermission, seconds, setSeconds, reason, setReason };
}

function send(project: Project, env: string, d: Draft) {
  return createAccessRequest(project.id, {
    env,
    permission: d.permission,
    durationSeconds: d.seconds,
    reason: d.reason.trim(),
  });
}

function RequestFields({ draft: d, error }: { draft: Draft; error: unknown }) {
  return (
    <>
      <Field label="Permission" name="permission" error={error}>
        <select
          class="input"
          name="permission"
          value={d.permission}
          onChange={(e) => d.setPermission(e.currentTarget.value as Permission)}
        >
          <option value="read">read: see values masked, pull them with a token</option>
          <option value="write">write: also reveal and change them</option>
        </select>
      </Field>
      <Field label="For" name="durationSeconds" error={error}>
        <select
          class="input"
          name="durationSeconds"
          value={String(d.seconds)}
          onChange={(e) => d.setSeconds(Number(e.currentTarget.value))}
        >
          {DURATIONS.map((x) => (
            <option key={x.seconds} value={String(x.seconds)}>
              {x.label}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Reason" name="reason" error={error} hint="Why you need it; the approver sees this.">
        <textarea
          class="input"
          name="reason"
          rows={3}
          maxLength={500}
          required
          value={d.reason}
          onInput={(e) => d.setReason(e.currentTarget.value)}
        />
      </Field>
    </>
  );
}
