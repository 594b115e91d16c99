import type { HistoryEntry } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import { listRevisions } from '../../api/revisions.js';
import { listVars, varHistory } from '../../api/variables.js';
import { useSubmit } from '../../hooks.js';
import { dateTime, relativeTime } from '../../lib/format.js';
import { displayValue } from '../../lib/mask.js';
import { Button, Empty, ErrorBanner, Modal, Spinner } from '../../ui.js';
import { restoreDeleted } from './restore.js';

/** Revisions read per step: the API's largest page (D36's limit), a few steps at most per click. */
const PAGE = 200;
const PAGES_PER_STEP = 5;

interface DeletedKey {
  key: string;
  /** The revision that deleted it last: when and by whom. */
  at: string;
  actor: string;
  /** The version a restore brings back (the newest that is not a deletion), from the key's own history. */
  last?: HistoryEntry | undefined;
}

/**
 * The keys of an environment that are deleted now (their newest history entry is `deleted`, D27), each
 * restorable. Found from the revisions (D44), newest first, whose entries name the keys they deleted: a
 * key deleted there and absent from the current listing is deleted now; its history then confirms it and
 * gives the version to restore. Older revisions are read on demand.
 */
export function DeletedKeysModal({
  project,
  env,
  canRestore,
  onClose,
  onHistory,
  onRestored,
}: {
  project: { id: string };
  env: string;
  canRestore: boolean;
  onClose: () => void;
  onHistory: (key: string) => void;
  onRestored: (key: string) => Promise<void>;
}) {
  const [found, setFound] = useState<DeletedKey[] | null>(null);
  const [cursor, setCursor] = useState<string>('');
  const [more, setMore] = useState(false);
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(false);
  const restore = useSubmit();
  const [restoring, setRestoring] = useState<string | null>(null);

  const step = async (from: string, sofar: DeletedKey[]) => {
    setLoading(true);
    try {
      const present = new Set((await listVars(project.id, env)).vars.map((v) => v.key));
      const seen = new Set(sofar.map((d) => d.key));
      const fresh: DeletedKey[] = [];
      let next = from;
      for (let i = 0; i < PAGES_PER_STEP; i++) {
        const page = await listRevisions(project.id, env, { limit: PAGE, cursor: next });
        for (const r of page.revisions) {
          for (const key of r.deleted) {
            // Newest first: the first revision naming a key is its latest deletion.
            if (present.has(key) || seen.has(key)) continue;
            seen.add(key);
            fresh.push({ key, at: r.createdAt, actor: r.actor });
          }
        }
        next = page.nextCursor;
        if (!next) break;
      }
      const checked = await Promise.all(
        fresh.map(async (d): Promise<DeletedKey | null> => {
          const { history } = await varHistory(project.id, env, d.key);
          // Re-created since and deleted again is still deleted; re-created and present was skipped above.
          if (history[0]?.action !== 'deleted') return null;
          return { ...d, last: history.find((h) => h.action !== 'deleted') };
        }),
      );
      setFound([...sofar, ...checked.filter((d): d is DeletedKey => d !== null)]);
      setCursor(next);
      setMore(next !== '');
    } catch (e) {
      setError(e);
    }
    setLoading(false);
  };
  useEffect(() => {
    void step('', []);
  }, [project.id, env]);

  return (
    <Modal title={`Deleted keys in ${env}`} onClose={onClose} wide>
      {error ? (
        <ErrorBanner error={error} />
      ) : !found ? (
        <Spinner />
      ) : (
        <div class="stack">
          {found.length === 0 ? (
            <Empty title="No deleted keys">
              {more
                ? 'None among the most recent changes.'
                : `Nothing has been deleted from ${env}, or it was restored.`}
            </Empty>
          ) : (
            <ul class="deleted-keys" aria-label="Deleted keys">
              {found.map((d) => (
                <li key={d.key} class="deleted-key">
                  <div class="deleted-key-main">
                    <code class="var-key">{d.key}</code>
                    <span class="muted small" title={dateTime(d.at)}>
                      deleted {relativeTime(d.at)} by {d.actor}
                    </span>
                    {d.last && (
                      <code class="var-value deleted-key-value">
                        {displayValue(d.last.value) || '(empty)'} <span class="muted">({d.last.type})</span>
                      </code>
                    )}
                  </div>
                  <div class="row-actions">
                    <Button
                      size="sm"
                      variant="ghost"
                      onClick={() => onHistory(d.key)}
                      aria-label={`History of ${d.key}`}
                    >
                      History
                    </Button>
                    {canRestore && d.last && (
                      <Button
                        size="sm"
                        aria-label={`Restore ${d.key}`}
                        busy={restore.busy && restoring === d.key}
                        onClick={() => {
                          setRestoring(d.key);
                          return restore.submit(async () => {
                            await restoreDeleted(project.id, env, d.key);
                            setFound((all) => (all ?? []).filter((x) => x.key !== d.key));
                            await onRestored(d.key);
                          })();
                        }}
                      >
                        Restore
                      </Button>
                    )}
                  </div>
                </li>
              ))}
            </ul>
          )}
          <ErrorBanner error={restore.error} />
          {more && (
            <div class="row-end">
              <Button size="sm" busy={loading} onClick={() => step(cursor, found)}>
                Look further back
              </Button>
            </div>
          )}
        </div>
      )}
    </Modal>
  );
}
