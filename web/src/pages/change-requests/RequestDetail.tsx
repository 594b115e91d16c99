import type { Project, Variable } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import {
  approveChangeRequest,
  type ChangeRequest,
  type ChangeRequestStatus,
  getChangeRequest,
  rejectChangeRequest,
  withdrawChangeRequest,
} from '../../api/change-requests.js';
import { listVarsAt } from '../../api/revisions.js';
import { ApiError } from '../../api.js';
import { Table } from '../../components/Table.js';
import { useAsync, useSubmit } from '../../hooks.js';
import { canReview, canWithdraw, canWrite } from '../../lib/access.js';
import { dateTime, relativeTime } from '../../lib/format.js';
import { displayValue } from '../../lib/mask.js';
import { useSession } from '../../session.js';
import { useToast } from '../../toast.js';
import { Button, ErrorBanner, Field, Modal, Pill } from '../../ui.js';
import { requestsChanged } from './open-counts.js';

export const STATUS_TONE: Record<ChangeRequestStatus, string> = {
  open: 'info',
  applied: 'ok',
  rejected: 'bad',
  withdrawn: 'neutral',
};

/**
 * One change request: who opened it and why, its diff against the state it was based on (masked; revealed
 * with write, which the server records as a reveal), and what the user may do with it (ADR 0013).
 */
export function RequestDetail({
  project,
  request,
  onClose,
  onChanged,
  onShowVariables,
}: {
  project: Project;
  request: ChangeRequest;
  onClose: () => void;
  /** After an approval, rejection or withdrawal: the list reloads. */
  onChanged: () => Promise<void>;
  onShowVariables: () => void;
}) {
  const toast = useToast();
  const { user } = useSession();
  const [cr, setCr] = useState(request);
  const [revealed, setRevealed] = useState(false);
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState('');
  const env = cr.env;
  // "Before" is the environment at the revision the request was based on: what its author saw and changed.
  const before = useAsync(async () => {
    const vars = cr.baseRevision > 0 ? (await listVarsAt(project.id, env, cr.baseRevision, revealed)).vars : [];
    return new Map(vars.map((v) => [v.key, v]));
  }, [cr.id, revealed]);
  const writable = canWrite(project, env);
  const reviewer = canReview(project, env, cr.authorId, user.id);
  const author = canWithdraw(project, env, cr.authorId, user.id);
  const act = useSubmit();

  const done = async (next: ChangeRequest, message: string) => {
    setCr(next);
    setRejecting(false);
    requestsChanged();
    toast(message);
    await onChanged();
  };
  const reveal = act.submit(async () => {
    setCr(await getChangeRequest(project.id, env, cr.id, true));
    setRevealed(true);
  });
  const approve = act.submit(async () => {
    const applied = await approveChangeRequest(project.id, env, cr.id);
    await done(applied, `Applied to ${env} as revision ${applied.appliedRevision}`);
  });
  const reject = act.submit(async () => {
    const rejected = await rejectChangeRequest(project.id, env, cr.id, reason.trim() || undefined);
    await done(rejected, 'Change request rejected');
  });
  const withdraw = act.submit(async () => {
    await withdrawChangeRequest(project.id, env, cr.id);
    await done({ ...cr, status: 'withdrawn' }, 'Change request withdrawn');
  });

  return (
    <Modal title={`Change request on ${env}`} onClose={onClose} wide>
      <div class="stack" data-testid="cr-detail">
        <div class="cr-summary">
          <Pill tone={STATUS_TONE[cr.status]}>{cr.status}</Pill>
          <span>
            by <strong>{cr.author}</strong>{' '}
            <span class="muted" title={dateTime(cr.createdAt)}>
              {relativeTime(cr.createdAt)}
            </span>
            , based on revision {cr.baseRevision}
          </span>
        </div>
        <blockquote class="cr-text">{cr.message}</blockquote>
        <Closed cr={cr} />
        <Table class="cr-diff" columns={['Key', 'Change', 'Before', 'After']}>
          {cr.changes.map((c) => {
            const old = before.data?.get(c.key);
            return (
              <tr key={c.key} data-testid={`cr-change-${c.key}`}>
                <td>
                  <code class="var-key">{c.key}</code>
                </td>
                <td>
                  <Pill tone={c.op === 'delete' ? 'bad' : old ? 'warn' : 'ok'}>
                    {c.op === 'delete' ? 'delete' : old ? 'update' : 'add'}
                  </Pill>
                </td>
                <td class="cr-old">
                  {old ? <ValueOf v={old} /> : <span class="muted">{before.data ? '(none)' : '…'}</span>}
                </td>
                <td class="cr-new">
                  {c.op === 'delete' ? (
                    <span class="muted">(deleted)</span>
                  ) : (
                    <>
                      <code class={`var-value ${c.type}`}>{displayValue(c.value) || '(empty)'}</code>{' '}
                      {(!old || old.type !== c.type) && <span class="muted small">{c.type}</span>}
                      {c.expiresAt && <span class="muted small"> · expires {dateTime(c.expiresAt)}</span>}
                    </>
                  )}
                </td>
              </tr>
            );
          })}
        </Table>
        {before.error !== undefined && <ErrorBanner error={before.error} onRetry={before.reload} />}
        {writable && !revealed && cr.changes.some((c) => c.type === 'secret' && c.op === 'set') && (
          <p class="muted small">
            Secret values are masked.{' '}
            <button type="button" class="linklike" onClick={reveal}>
              Reveal values
            </button>{' '}
            (recorded in the audit log as a reveal).
          </p>
        )}
        <ActionError error={act.error} env={env} />
        {cr.status === 'open' && rejecting && (
          <form class="stack" onSubmit={reject}>
            <Field label="Reason" name="reason" hint="Optional; mailed to the author and shown on the request.">
              <textarea
                class="input"
                rows={2}
                maxLength={2000}
                value={reason}
                onInput={(e) => setReason(e.currentTarget.value)}
              />
            </Field>
            <div class="row-end">
              <Button onClick={() => setRejecting(false)}>Cancel</Button>
              <Button type="submit" variant="danger" busy={act.busy}>
                Reject request
              </Button>
            </div>
          </form>
        )}
        {cr.status === 'open' && !rejecting && (
          <div class="row-end cr-actions">
            <WhoActs reviewer={reviewer} author={author} />
            {author && (
              <Button variant="ghost" busy={act.busy} onClick={withdraw}>
                Withdraw
              </Button>
            )}
            {reviewer && (
              <>
                <Button variant="danger" onClick={() => setRejecting(true)}>
                  Reject…
                </Button>
                <Button variant="primary" busy={act.busy} onClick={approve}>
                  Approve and apply
                </Button>
              </>
            )}
          </div>
        )}
        {cr.status === 'applied' && (
          <div class="row-end">
            <Button onClick={onShowVariables}>Show the variables of {env}</Button>
          </div>
        )}
      </div>
    </Modal>
  );
}

function ValueOf({ v }: { v: Variable }) {
  return <code class={`var-value ${v.type}`}>{displayValue(v.value) || '(empty)'}</code>;
}

/** When and by whom a closed request was closed, and what its closing did. */
function Closed({ cr }: { cr: ChangeRequest }) {
  if (cr.status === 'open') return null;
  const by = cr.closedBy ? ` by ${cr.closedBy}` : '';
  const when = cr.closedAt ? ` ${relativeTime(cr.closedAt)}` : '';
  return (
    <div class={`alert ${cr.status === 'applied' ? 'alert-ok' : 'alert-info'}`} role="status" data-testid="cr-closed">
      <span>
        {cr.status === 'applied' && `Applied as revision ${cr.appliedRevision}${by}${when}.`}
        {cr.status === 'rejected' && `Rejected${by}${when}${cr.reason ? `: “${cr.reason}”` : '.'}`}
        {cr.status === 'withdrawn' && `Withdrawn${by}${when}.`}
      </span>
    </div>
  );
}

/** Why the buttons the user sees are the ones they have (D57: say why something is not offered). */
function WhoActs({ reviewer, author }: { reviewer: boolean; author: boolean }) {
  if (reviewer) return null;
  return (
    <span class="muted small cr-who">
      {author
        ? 'You opened this request: another Owner or project Admin approves or rejects it.'
        : 'An Owner or project Admin with write on this environment approves or rejects it.'}
    </span>
  );
}

/** A refused action in words: a conflict names the keys changed after the request was opened. */
function ActionError({ error, env }: { error: unknown; env: string }) {
  if (error === undefined) return null;
  if (error instanceof ApiError && error.status === 409 && error.field === 'baseRevision') {
    const keys = /: ([^;]+);/.exec(error.message)?.[1] ?? 'a key it touches';
    return (
      <div class="alert alert-warn" role="alert" data-testid="cr-conflict">
        <strong>{keys}</strong> changed in {env} after this request was opened, so applying it would overwrite that
        change. Nothing was applied and the request stays open: reject it, or ask its author to withdraw it and open a
        new one.
      </div>
    );
  }
  return <ErrorBanner error={error} />;
}
