import { useState } from 'preact/hooks';
import { listVarsAt, type Revision } from '../../api/revisions.js';
import { Actor } from '../../components/Actor.js';
import { Table } from '../../components/Table.js';
import { useAsync } from '../../hooks.js';
import { dateTime, relativeTime } from '../../lib/format.js';
import { displayValue } from '../../lib/mask.js';
import { actionLabel } from '../../lib/revisions.js';
import { Button, Empty, ErrorBanner, Modal, Spinner } from '../../ui.js';

/**
 * An environment's variables as they were right after one revision (D44): read-only, masked, and revealed
 * only on request by someone with write permission (revealing needs write, D57).
 */
export function AtRevisionModal({
  projectId,
  env,
  revision: r,
  isCurrent,
  canReveal,
  onClose,
}: {
  projectId: string;
  env: string;
  revision: Revision;
  isCurrent: boolean;
  canReveal: boolean;
  onClose: () => void;
}) {
  const [revealed, setRevealed] = useState(false);
  // Keeps the shown listing while a toggle reloads it; a slower answer to an earlier toggle is dropped.
  const listing = useAsync(
    async () => (await listVarsAt(projectId, env, r.revision, revealed)).vars,
    [projectId, env, r.revision, revealed],
  );
  const vars = listing.data;
  return (
    <Modal title={`${env} at revision ${r.revision}`} onClose={onClose} wide>
      <div class="stack">
        <div class={`alert ${isCurrent ? 'alert-info' : 'alert-warn'} past-state`} data-testid="past-state">
          <div>
            <strong>{isCurrent ? 'Current state' : 'Past state, read-only'}</strong>
            <span class="past-state-line">
              The variables of {env} right after revision {r.revision}: {actionLabel(r.action).toLowerCase()} by{' '}
              {r.actor ? <Actor name={r.actor} /> : 'someone'},{' '}
              <time dateTime={r.createdAt} title={dateTime(r.createdAt)}>
                {relativeTime(r.createdAt)}
              </time>
              .{isCurrent ? ' Nothing has changed since.' : ' Later changes are not shown here.'}
            </span>
          </div>
        </div>
        <div class="toolbar">
          <span class="muted small">{vars ? `${vars.length} variable${vars.length === 1 ? '' : 's'}` : ''}</span>
          <div class="toolbar-spacer" />
          {canReveal && (
            <Button size="sm" onClick={() => setRevealed(!revealed)}>
              {revealed ? 'Hide values' : 'Reveal values'}
            </Button>
          )}
        </div>
        {!canReveal && <p class="note">Secret values are masked: you need write permission to see them.</p>}
        {listing.error && !listing.loading ? (
          <ErrorBanner error={listing.error} />
        ) : !vars ? (
          <Spinner />
        ) : vars.length === 0 ? (
          <Empty title="No variables">{env} had no variables right after this revision.</Empty>
        ) : (
          <Table
            class="at-revision-table"
            label={`Variables of ${env} at revision ${r.revision}`}
            columns={['Key', 'Value', { label: 'Type', class: 'col-type' }]}
          >
            {vars.map((v) => (
              <tr key={v.key}>
                <td>
                  <code class="var-key">{v.key}</code>
                </td>
                <td class="at-revision-value">
                  <code>{displayValue(v.value) || '(empty)'}</code>
                </td>
                <td class="col-type muted small">{v.type}</td>
              </tr>
            ))}
          </Table>
        )}
      </div>
    </Modal>
  );
}
