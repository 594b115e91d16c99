import type { HistoryEntry } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import { listIdentities } from '../api/identities.js';
import { listMembers } from '../api/team.js';
import { restoreVar, varHistory } from '../api/variables.js';
import { Actor } from '../components/Actor.js';
import { useSubmit } from '../hooks.js';
import { dateTime, relativeTime } from '../lib/format.js';
import { displayValue, isMasked } from '../lib/mask.js';
import { isOwner, useSession } from '../session.js';
import { Button, Empty, ErrorBanner, Modal, Pill, Spinner } from '../ui.js';

const TONE: Record<HistoryEntry['action'], string> = {
  created: 'ok',
  updated: 'info',
  deleted: 'bad',
  restored: 'warn',
};

/**
 * Every version of one key (D27), newest first, with who made it (by name, from the workspace's members) and
 * when; restorable with write on the environment. Secret values stay masked until "Reveal values", which needs
 * write (D23) and is recorded in the audit log as a reveal.
 */
export function HistoryModal({
  projectId,
  env,
  varKey,
  canRestore,
  canReveal = canRestore,
  onClose,
  onRestored,
}: {
  projectId: string;
  env: string;
  varKey: string;
  canRestore: boolean;
  /** Write on the environment; defaults to `canRestore`. */
  canReveal?: boolean;
  onClose: () => void;
  onRestored: () => void;
}) {
  const [entries, setEntries] = useState<HistoryEntry[] | null>(null);
  const [revealed, setRevealed] = useState(false);
  const [error, setError] = useState<unknown>();
  const [names, setNames] = useState<Map<string, string>>(new Map());
  const restore = useSubmit();
  const reveal = useSubmit();
  const [restoring, setRestoring] = useState<number | null>(null);
  useEffect(() => {
    setRevealed(false);
    setEntries(null);
    varHistory(projectId, env, varKey)
      .then((r) => setEntries(r.history))
      .catch(setError);
  }, [projectId, env, varKey]);
  useEffect(() => {
    // Every workspace member may list the members; without the list, people show as "a member".
    listMembers()
      .then((r) => setNames(new Map(r.members.map((m) => [m.id, m.name]))))
      .catch(() => undefined);
  }, []);
  // A write by a workload identity's token records the identity's id (D60); only Owners may list identities.
  const { user } = useSession();
  const owner = isOwner(user);
  const [identityNames, setIdentityNames] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    if (!owner) return;
    listIdentities()
      .then((r) => setIdentityNames(new Map(r.identities.map((i) => [i.id, `identity:${i.name}`]))))
      .catch(() => undefined);
  }, [owner]);
  const who = (id: string | null) => {
    if (id === null) return 'unknown';
    const identity = identityNames.get(id);
    if (identity) return <Actor name={identity} />;
    return names.get(id) ?? (names.size ? 'a former member' : `${id.slice(0, 8)}…`);
  };
  const anyMasked = entries?.some((h) => h.action !== 'deleted' && isMasked(h.value)) ?? false;
  const shownError = error ?? restore.error ?? reveal.error;
  return (
    <Modal title={`History of ${varKey}`} onClose={onClose} wide>
      {shownError ? (
        <ErrorBanner error={shownError} />
      ) : !entries ? (
        <Spinner />
      ) : entries.length === 0 ? (
        <Empty title="No history" />
      ) : (
        <>
          {anyMasked && !revealed && (
            <div class="note history-note">
              <span>
                {canReveal
                  ? 'Secret values are masked. Revealing them is recorded in the audit log.'
                  : 'Secret values are masked: you need write permission to see them.'}
              </span>
              {canReveal && (
                <Button
                  size="sm"
                  busy={reveal.busy}
                  onClick={reveal.submit(async () => {
                    const r = await varHistory(projectId, env, varKey, true);
                    setEntries(r.history);
                    setRevealed(true);
                  })}
                >
                  Reveal values
                </Button>
              )}
            </div>
          )}
          <ol class="timeline">
            {entries.map((h, i) => (
              <li key={h.id} class="timeline-item" data-testid="history-entry">
                <div class="timeline-head">
                  <Pill tone={TONE[h.action]}>{h.action}</Pill>
                  <span class="small history-by" data-testid="history-by">
                    by {who(h.changedBy)}
                  </span>
                  <span class="muted small" title={dateTime(h.changedAt)}>
                    {relativeTime(h.changedAt)}
                  </span>
                  <span class="muted small">{h.type}</span>
                  {i === 0 && <Pill tone="neutral">current</Pill>}
                  <div class="toolbar-spacer" />
                  {canRestore && i > 0 && h.action !== 'deleted' && (
                    <Button
                      size="sm"
                      busy={restore.busy && restoring === h.id}
                      aria-label={`Restore version ${h.id}`}
                      onClick={() => {
                        setRestoring(h.id);
                        return restore.submit(async () => {
                          await restoreVar(projectId, env, varKey, h.id);
                          onRestored();
                        })();
                      }}
                    >
                      Restore
                    </Button>
                  )}
                </div>
                {h.action !== 'deleted' && <code class="timeline-value">{displayValue(h.value) || '(empty)'}</code>}
              </li>
            ))}
          </ol>
        </>
      )}
    </Modal>
  );
}
