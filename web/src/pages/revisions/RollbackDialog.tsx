import type { Variable } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import { listRevisions, listVarsAt, type Revision, type RollbackResult, rollback } from '../../api/revisions.js';
import { ApiError } from '../../api.js';
import { useSubmit } from '../../hooks.js';
import { displayValue } from '../../lib/mask.js';
import { diffSize, type RollbackChange, type RollbackDiff, rollbackDiff } from '../../lib/revisions.js';
import { Button, ErrorBanner, FormError, Modal, Spinner } from '../../ui.js';

/** The comparison the dialog shows, and the revision it was computed against (sent as If-Match, D46). */
interface Comparison {
  base: number;
  diff: RollbackDiff;
  revealed: boolean;
}

/**
 * "Roll back to here": the changes the rollback will make (D45), from the listing at the current revision
 * and the listing at the target, then the rollback itself with `If-Match` naming the revision compared
 * against, so a change someone made in between is refused (412) rather than undone unseen (D46).
 */
export function RollbackDialog({
  projectId,
  env,
  target,
  onClose,
  onDone,
}: {
  projectId: string;
  env: string;
  target: Revision;
  onClose: () => void;
  onDone: (result: RollbackResult) => void;
}) {
  const [cmp, setCmp] = useState<Comparison | null>(null);
  const [loadError, setLoadError] = useState<unknown>();
  /** The environment moved after the comparison: the rollback was refused and needs a fresh look. */
  const [stale, setStale] = useState(false);
  const { busy, error, setError, submit } = useSubmit();

  const compare = async (reveal: boolean) => {
    setLoadError(undefined);
    try {
      // Both sides are listings at a fixed revision, so the diff is exactly the step from `base` to the target.
      const { revisions } = await listRevisions(projectId, env, { limit: 1 });
      const base = revisions[0]?.revision ?? 0;
      const [atBase, atTarget] = await Promise.all([
        listVarsAt(projectId, env, base, reveal),
        listVarsAt(projectId, env, target.revision, reveal),
      ]);
      setCmp({ base, diff: rollbackDiff(atBase.vars, atTarget.vars), revealed: reveal });
    } catch (e) {
      setLoadError(e);
    }
  };
  useEffect(() => {
    void compare(false);
  }, []);

  const reviewAgain = async () => {
    setStale(false);
    setError(undefined);
    setCmp(null);
    await compare(cmp?.revealed ?? false);
  };

  const confirm = submit(async () => {
    if (!cmp) return;
    try {
      onDone(await rollback(projectId, env, target.revision, cmp.base));
    } catch (e) {
      if (e instanceof ApiError && e.code === 'PRECONDITION_FAILED') {
        setStale(true);
        return;
      }
      throw e;
    }
  });

  const n = cmp ? diffSize(cmp.diff) : 0;
  // Masked secrets saved again since the target (a restore makes a new version of the same value): only
  // their values could tell, so they are listed apart, and "Reveal values" settles them.
  const updates = cmp?.diff.update.filter((c) => !c.unsure) ?? [];
  const unsure = cmp?.diff.update.filter((c) => c.unsure) ?? [];
  const upToDate = cmp !== null && cmp.base === target.revision;
  return (
    <Modal title={`Roll back ${env} to revision ${target.revision}`} onClose={onClose} wide>
      <div class="stack">
        {loadError ? (
          <ErrorBanner error={loadError} onRetry={() => void compare(cmp?.revealed ?? false)} />
        ) : !cmp ? (
          <Spinner label="Comparing…" />
        ) : (
          <>
            <p>
              {upToDate ? (
                <>
                  Revision {target.revision} is the current revision of {env}.
                </>
              ) : (
                <>
                  Compared with the current revision, <strong>#{cmp.base}</strong>, rolling back makes one new revision
                  in which the variables of <strong>{env}</strong> are what they were right after revision{' '}
                  {target.revision}.
                </>
              )}
            </p>
            {n === 0 ? (
              <div class="alert alert-ok" data-testid="rollback-nothing">
                {env} already matches revision {target.revision}: there is nothing to roll back.
              </div>
            ) : (
              <>
                <div class="toolbar rollback-summary" data-testid="rollback-summary">
                  {cmp.diff.create.length > 0 && <span class="pill pill-ok">{cmp.diff.create.length} to create</span>}
                  {updates.length > 0 && <span class="pill pill-warn">{updates.length} to update</span>}
                  {cmp.diff.delete.length > 0 && <span class="pill pill-bad">{cmp.diff.delete.length} to delete</span>}
                  {unsure.length > 0 && <span class="pill pill-neutral">{unsure.length} to compare</span>}
                  <div class="toolbar-spacer" />
                  <Button
                    size="sm"
                    onClick={() => {
                      setCmp(null);
                      void compare(!cmp.revealed);
                    }}
                  >
                    {cmp.revealed ? 'Hide values' : 'Reveal values'}
                  </Button>
                </div>
                <Changes title="Create" kind="create" changes={cmp.diff.create} />
                <Changes title="Update" kind="update" changes={updates} />
                <Changes title="Delete" kind="delete" changes={cmp.diff.delete} />
                {unsure.length > 0 && (
                  <>
                    <Changes title="Saved again since, maybe equal" kind="unsure" changes={unsure} />
                    <p class="note">
                      These secrets were saved again after revision {target.revision}, so their values may or may not
                      differ; the rollback restores a differing one and leaves an equal one alone. Reveal values to
                      compare them.
                    </p>
                  </>
                )}
              </>
            )}
          </>
        )}
        {stale && (
          <div class="alert alert-warn" role="alert" data-testid="rollback-stale">
            <div>
              <strong>{env} changed since you opened this; review again.</strong>
              <span class="past-state-line">
                Someone saved a change after revision {cmp?.base}. Nothing was rolled back.
              </span>
            </div>
            <Button size="sm" onClick={reviewAgain}>
              Review again
            </Button>
          </div>
        )}
        <FormError error={error} />
        <div class="row-end">
          <Button onClick={onClose}>{n === 0 && cmp ? 'Close' : 'Cancel'}</Button>
          {cmp && n > 0 && !stale && (
            <Button variant="danger" busy={busy} onClick={confirm}>
              Roll back
            </Button>
          )}
        </div>
      </div>
    </Modal>
  );
}

type Kind = keyof RollbackDiff | 'unsure';
const KIND_TAG: Record<Kind, string> = { create: 'ok', update: 'warn', delete: 'bad', unsure: 'neutral' };

function Changes({ title, kind, changes }: { title: string; kind: Kind; changes: RollbackChange[] }) {
  if (changes.length === 0) return null;
  return (
    <section class="rollback-changes" aria-label={`${title} ${changes.length}`} data-testid={`rollback-${kind}`}>
      <h3 class={`rollback-heading revision-tag revision-tag-${KIND_TAG[kind]}`}>
        {title} ({changes.length})
      </h3>
      <ul class="rollback-list">
        {changes.map((c) => (
          <li key={c.key} class="rollback-row">
            <code class="var-key">{c.key}</code>
            <span class="rollback-values">
              {kind !== 'create' && <Value v={c.current} />}
              {(kind === 'update' || kind === 'unsure') && (
                <span class="muted">
                  <span aria-hidden="true">→</span>
                  <span class="sr-only">becomes</span>
                </span>
              )}
              {kind !== 'delete' && <Value v={c.restored} />}
              {kind === 'delete' && <span class="muted small">deleted</span>}
              {c.current && c.restored && c.current.type !== c.restored.type && (
                <span class="muted small">
                  {c.current.type} → {c.restored.type}
                </span>
              )}
              {c.current && c.restored && c.current.expiresAt !== c.restored.expiresAt && (
                <span class="muted small">expiry changes</span>
              )}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Value({ v }: { v: Variable | undefined }) {
  if (!v) return null;
  return (
    <code class="rollback-value" title={v.type}>
      {displayValue(v.value) || '(empty)'}
    </code>
  );
}
