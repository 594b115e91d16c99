import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, seg } from '../api.js';
import { dateTime, relativeTime } from '../lib/format.js';
import type { HistoryEntry } from '../types.js';
import { Button, Empty, ErrorBanner, Modal, Pill, Spinner } from '../ui.js';

const TONE: Record<HistoryEntry['action'], string> = {
  created: 'ok',
  updated: 'info',
  deleted: 'bad',
  restored: 'warn',
};

/** Every version of one key (D27), newest first, each restorable. Plaintext when the caller may reveal. */
export function HistoryModal({
  base,
  varKey,
  onClose,
  onRestored,
}: {
  base: string;
  varKey: string;
  onClose: () => void;
  onRestored: () => void;
}) {
  const [entries, setEntries] = useState<HistoryEntry[] | null>(null);
  const [masked, setMasked] = useState(false);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState<number | null>(null);
  const path = `${base}/vars/${seg(varKey)}/history`;
  useEffect(() => {
    api
      .get<{ history: HistoryEntry[] }>(path, { reveal: 'true' })
      .catch((e) => {
        if (e instanceof ApiError && e.status === 403) {
          setMasked(true);
          return api.get<{ history: HistoryEntry[] }>(path);
        }
        throw e;
      })
      .then((r) => setEntries(r.history))
      .catch(setError);
  }, [path]);
  return (
    <Modal title={`History of ${varKey}`} onClose={onClose} wide>
      {error ? (
        <ErrorBanner error={error} />
      ) : !entries ? (
        <Spinner />
      ) : entries.length === 0 ? (
        <Empty title="No history" />
      ) : (
        <>
          {masked && <p class="note">Secret values are masked: you need write permission to see them.</p>}
          <ol class="timeline">
            {entries.map((h, i) => (
              <li key={h.id} class="timeline-item">
                <div class="timeline-head">
                  <Pill tone={TONE[h.action]}>{h.action}</Pill>
                  <span class="muted small" title={dateTime(h.changedAt)}>
                    {relativeTime(h.changedAt)}
                  </span>
                  <span class="muted small">{h.type}</span>
                  {i === 0 && <Pill tone="neutral">current</Pill>}
                  <div class="toolbar-spacer" />
                  {i > 0 && h.action !== 'deleted' && (
                    <Button
                      size="sm"
                      busy={busy === h.id}
                      aria-label={`Restore version ${h.id}`}
                      onClick={async () => {
                        setBusy(h.id);
                        try {
                          await api.post(`${base}/vars/${seg(varKey)}/restore`, { versionId: h.id });
                          onRestored();
                        } catch (e) {
                          setError(e);
                          setBusy(null);
                        }
                      }}
                    >
                      Restore
                    </Button>
                  )}
                </div>
                {h.action !== 'deleted' && (
                  <code class="timeline-value">{h.value === '***' ? '••••••••' : h.value || '(empty)'}</code>
                )}
              </li>
            ))}
          </ol>
        </>
      )}
    </Modal>
  );
}
