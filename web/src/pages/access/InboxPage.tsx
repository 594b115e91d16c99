import { useState } from 'preact/hooks';
import { approveAccessRequest, denyAccessRequest } from '../../api/access.js';
import { ModalForm } from '../../components/ModalForm.js';
import { Table } from '../../components/Table.js';
import { useSubmit } from '../../hooks.js';
import { dateTime, relativeTime } from '../../lib/format.js';
import { approvalChoices, spanWords } from '../../lib/grants.js';
import { useSession } from '../../session.js';
import { useAction, useToast } from '../../toast.js';
import { Async, Button, Empty, Field, Link, PageHeader, Pill } from '../../ui.js';
import { type InboxItem, useInbox } from './useInbox.js';

const STATUS_TONE = {
  pending: 'warn',
  approved: 'ok',
  denied: 'bad',
  withdrawn: 'neutral',
  expired: 'neutral',
} as const;
/** How many decided requests the page shows below the pending ones. */
const RECENT = 20;

/**
 * D74's approver inbox: the pending access requests of every project the viewer administers, each approved
 * in one click for 1 hour, 1 day or the asked duration (never longer than asked), or denied with an optional
 * reason; the viewer's own requests are shown but not decidable by them. Recent decisions below.
 */
export function InboxPage({ highlight = null }: { highlight?: string | null }) {
  const state = useInbox();
  return (
    <>
      <PageHeader
        title="Access requests"
        subtitle="Requests for temporary access to the environments of the projects you administer."
      />
      <Async state={state}>
        {({ admin, items }) => {
          if (admin.length === 0) {
            return (
              <Empty title="No projects to administer">
                Requests reach the Admins of a project and the workspace's Owners.
              </Empty>
            );
          }
          const pending = items.filter((i) => i.status === 'pending');
          const decided = items.filter((i) => i.status !== 'pending').slice(0, RECENT);
          return (
            <>
              <h2 class="section-title">Pending</h2>
              {pending.length === 0 ? (
                <Empty title="Nothing to decide">New requests appear here; they expire after 24 hours.</Empty>
              ) : (
                <ul class="request-list" data-testid="pending-requests">
                  {pending.map((r) => (
                    <PendingRequest key={r.id} request={r} highlight={r.id === highlight} onDone={state.reload} />
                  ))}
                </ul>
              )}
              <h2 class="section-title">Recently decided</h2>
              {decided.length === 0 ? (
                <Empty title="None yet">Approved, denied, withdrawn and expired requests appear here.</Empty>
              ) : (
                <Table
                  class="table-cards"
                  columns={['Requester', 'Access', 'Status', 'Decided']}
                  testId="decided-requests"
                >
                  {decided.map((r) => (
                    <tr key={r.id} class={r.id === highlight ? 'row-highlight' : ''} data-request={r.id}>
                      <td class="cell-head">
                        <div>{r.requesterName}</div>
                        <div class="muted small">{r.requesterEmail}</div>
                      </td>
                      <td data-label="Access">
                        <span>
                          {r.permission} on <strong>{r.env}</strong> in{' '}
                          <Link to={`/projects/${r.project.id}`}>{r.project.name}</Link> ·{' '}
                          {spanWords(r.grantedSeconds ?? r.durationSeconds)}
                        </span>
                      </td>
                      <td data-label="Status">
                        <span>
                          <Pill tone={STATUS_TONE[r.status]}>{r.status}</Pill>
                          {r.decisionReason && <span class="muted small"> “{r.decisionReason}”</span>}
                        </span>
                      </td>
                      <td class="small" data-label="Decided">
                        {r.decidedAt ? (
                          <span title={dateTime(r.decidedAt)}>
                            {relativeTime(r.decidedAt)}
                            {r.decidedByName ? ` by ${r.decidedByName}` : ''}
                          </span>
                        ) : (
                          '—'
                        )}
                      </td>
                    </tr>
                  ))}
                </Table>
              )}
            </>
          );
        }}
      </Async>
    </>
  );
}

function PendingRequest({
  request: r,
  highlight,
  onDone,
}: {
  request: InboxItem;
  highlight: boolean;
  onDone: () => Promise<void>;
}) {
  const { user } = useSession();
  const toast = useToast();
  const act = useAction();
  const [denying, setDenying] = useState(false);
  const mine = r.requesterId === user.id;
  return (
    <li
      class={`card request-card ${highlight ? 'row-highlight' : ''}`}
      data-testid="access-request"
      data-request={r.id}
    >
      <div class="request-main">
        <div class="request-who">
          <strong>{r.requesterName}</strong> <span class="muted small">{r.requesterEmail}</span>
        </div>
        <div class="request-what">
          wants <Pill tone={r.permission === 'write' ? 'info' : 'neutral'}>{r.permission}</Pill> on{' '}
          <strong>{r.env}</strong> in <Link to={`/projects/${r.project.id}`}>{r.project.name}</Link> for{' '}
          <strong data-testid="asked-duration">{spanWords(r.durationSeconds)}</strong>
        </div>
        <blockquote class="request-reason">{r.reason}</blockquote>
        <div class="muted small" title={dateTime(r.createdAt)}>
          asked {relativeTime(r.createdAt)} · expires unanswered {relativeTime(r.pendingUntil)}
        </div>
      </div>
      <div class="request-actions">
        {mine ? (
          <Pill>your request</Pill>
        ) : (
          <>
            {approvalChoices(r.durationSeconds).map((c) => (
              <Button
                key={c.seconds}
                size="sm"
                variant="primary"
                onClick={() =>
                  act(async () => {
                    await approveAccessRequest(r.project.id, r.id, c.seconds);
                    toast(`${r.requesterName} has ${r.permission} on ${r.env} for ${spanWords(c.seconds)}`);
                    await onDone();
                  })
                }
              >
                Approve {c.label}
              </Button>
            ))}
            <Button size="sm" variant="ghost" class="danger-text" onClick={() => setDenying(true)}>
              Deny
            </Button>
          </>
        )}
      </div>
      {denying && (
        <DenyDialog
          request={r}
          onClose={() => setDenying(false)}
          onDenied={async () => {
            setDenying(false);
            toast(`Request of ${r.requesterName} denied`);
            await onDone();
          }}
        />
      )}
    </li>
  );
}

function DenyDialog({
  request: r,
  onClose,
  onDenied,
}: {
  request: InboxItem;
  onClose: () => void;
  onDenied: () => Promise<void>;
}) {
  const [reason, setReason] = useState('');
  const { busy, error, submit } = useSubmit();
  return (
    <ModalForm
      title={`Deny ${r.requesterName}'s request?`}
      onClose={onClose}
      onSubmit={submit(async () => {
        await denyAccessRequest(r.project.id, r.id, reason.trim() || undefined);
        await onDenied();
      })}
      busy={busy}
      error={error}
      fields={['reason']}
      submitLabel="Deny"
    >
      <Field label="Reason (optional, shown to them)" name="reason" error={error}>
        <textarea
          class="input"
          rows={3}
          maxLength={500}
          value={reason}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      </Field>
    </ModalForm>
  );
}
