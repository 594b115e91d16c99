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
import { Button, Field, Pill } from '../../ui.js';

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
 * the viewer lacks (none, or only read when `focus` asks for write).
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
  if (envs.length === 0) return null;
  const mine = pending.data ?? [];
  return (
    <div class="request-access" data-testid="request-access">
      {focus && (
        <div class="alert alert-warn" role="status" data-testid="no-access">
          The link was to <strong>{focus}</strong>, which you cannot open: request access below, and one of them can
          approve it for a while.
        </div>
      )}
      <ul class="request-access-list">
        {envs.map((env) => {
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
  const [permission, setPermission] = useState<Permission>(initial);
  const [seconds, setSeconds] = useState<number>(HOUR);
  const [reason, setReason] = useState('');
  const { busy, error, submit } = useSubmit();
  return (
    <ModalForm
      title={`Request access to ${env}`}
      onClose={onClose}
      onSubmit={submit(async () => {
        await createAccessRequest(project.id, { env, permission, durationSeconds: seconds, reason: reason.trim() });
        await onSent();
      })}
      busy={busy}
      error={error}
      fields={['permission', 'durationSeconds', 'reason']}
      submitLabel="Send request"
      disabled={!reason.trim()}
    >
      <p class="muted small">
        The project's Admins and the workspace's Owners are told; one of them approves, possibly for a shorter time. An
        unanswered request expires after 24 hours.
      </p>
      <Field label="Permission" name="permission" error={error}>
        <select class="input" value={permission} onChange={(e) => setPermission(e.currentTarget.value as Permission)}>
          <option value="read">read: see values masked, pull them with a token</option>
          <option value="write">write: also reveal and change them</option>
        </select>
      </Field>
      <Field label="For" name="durationSeconds" error={error}>
        <select class="input" value={String(seconds)} onChange={(e) => setSeconds(Number(e.currentTarget.value))}>
          {DURATIONS.map((d) => (
            <option key={d.seconds} value={String(d.seconds)}>
              {d.label}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Reason" name="reason" error={error} hint="Why you need it; the approver sees this.">
        <textarea
          class="input"
          rows={3}
          maxLength={500}
          required
          value={reason}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      </Field>
    </ModalForm>
  );
}
