import type { Environment, Project } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import { listRevisions, type Revision, type RollbackResult } from '../../api/revisions.js';
import { Actor } from '../../components/Actor.js';
import { EnvTabs } from '../../components/EnvTabs.js';
import { useSubmit } from '../../hooks.js';
import { canWrite, readOnlyNote } from '../../lib/access.js';
import { dateTime, relativeTime } from '../../lib/format.js';
import { actionLabel } from '../../lib/revisions.js';
import { Button, Empty, ErrorBanner, Pill, Spinner } from '../../ui.js';
import { AtRevisionModal } from './AtRevisionModal.js';
import { RollbackDialog } from './RollbackDialog.js';

/** Revisions per page of the timeline; "Load more" asks for the next page with the server's cursor. */
export const REVISIONS_PAGE = 20;

/**
 * The Revisions tab: per environment, every committed change to its variables (D44), newest first, each
 * viewable as it left the environment and, with write permission, the target of a rollback (D45).
 */
export function RevisionsView({
  project,
  envs,
  env,
  onEnv,
  onRolledBack,
}: {
  project: Project;
  envs: Environment[];
  env: string | null;
  onEnv: (e: string) => void;
  onRolledBack: (env: string, result: RollbackResult, target: number) => void;
}) {
  const current = envs.find((e) => e.name === env);
  return (
    <>
      <EnvTabs envs={envs} current={env} onSelect={onEnv} />
      {current ? (
        <Timeline
          key={`${project.id}/${current.name}`}
          project={project}
          env={current.name}
          onRolledBack={onRolledBack}
        />
      ) : (
        <Empty title="No environments for you">
          You have no access to any environment of this project; a project Admin can grant it.
        </Empty>
      )}
    </>
  );
}

function Timeline({
  project,
  env,
  onRolledBack,
}: {
  project: Project;
  env: string;
  onRolledBack: (env: string, result: RollbackResult, target: number) => void;
}) {
  // Rolling back is a write (D45); without write the timeline and past states are still there to read.
  const writable = canWrite(project, env);
  const [revisions, setRevisions] = useState<Revision[] | null>(null);
  const [cursor, setCursor] = useState('');
  const [error, setError] = useState<unknown>();
  const more = useSubmit();
  const [viewing, setViewing] = useState<Revision | null>(null);
  const [rollingBack, setRollingBack] = useState<Revision | null>(null);

  const loadFirst = () => {
    setError(undefined);
    listRevisions(project.id, env, { limit: REVISIONS_PAGE })
      .then((r) => {
        setRevisions(r.revisions);
        setCursor(r.nextCursor);
      })
      .catch(setError);
  };
  useEffect(loadFirst, []);

  // Only the newest revision of the first page is the current state; a later page never holds it.
  const newest = revisions?.[0]?.revision;
  return (
    <section class="panel" aria-label={`Revisions of ${env}`}>
      <p class="note">
        Every change to the variables of <strong>{env}</strong> makes a revision, newest first.
        {writable ? ' Roll back to one to make the variables what they were right after it.' : ''}
      </p>
      {/* Why there is no rollback here, and who can change that (D57). */}
      {!writable && (
        <p class="note" data-testid="read-only-note">
          {readOnlyNote(env)}
        </p>
      )}
      {error ? (
        <ErrorBanner error={error} onRetry={loadFirst} />
      ) : !revisions ? (
        <Spinner />
      ) : revisions.length === 0 ? (
        <Empty title="No revisions yet">The first change to a variable of {env} makes revision 1.</Empty>
      ) : (
        <>
          <ol class="timeline revisions" aria-label={`Revisions of ${env}, newest first`}>
            {revisions.map((r) => (
              <RevisionItem
                key={r.revision}
                r={r}
                isCurrent={r.revision === newest}
                writable={writable}
                onView={() => setViewing(r)}
                onRollback={() => setRollingBack(r)}
              />
            ))}
          </ol>
          <ErrorBanner error={more.error} />
          {cursor && (
            <div class="row-center">
              <Button
                busy={more.busy}
                onClick={more.submit(async () => {
                  const r = await listRevisions(project.id, env, { limit: REVISIONS_PAGE, cursor });
                  setRevisions((prev) => [...(prev ?? []), ...r.revisions]);
                  setCursor(r.nextCursor);
                })}
              >
                Load more
              </Button>
            </div>
          )}
        </>
      )}
      {viewing && (
        <AtRevisionModal
          projectId={project.id}
          env={env}
          revision={viewing}
          isCurrent={viewing.revision === newest}
          canReveal={writable}
          onClose={() => setViewing(null)}
        />
      )}
      {rollingBack && (
        <RollbackDialog
          projectId={project.id}
          env={env}
          target={rollingBack}
          onClose={() => setRollingBack(null)}
          onDone={(result) => {
            setRollingBack(null);
            onRolledBack(env, result, rollingBack.revision);
          }}
        />
      )}
    </section>
  );
}

function RevisionItem({
  r,
  isCurrent,
  writable,
  onView,
  onRollback,
}: {
  r: Revision;
  isCurrent: boolean;
  writable: boolean;
  onView: () => void;
  onRollback: () => void;
}) {
  return (
    <li class="timeline-item revision" data-testid={`revision-${r.revision}`}>
      <div class="timeline-head">
        <span class="revision-num">#{r.revision}</span>
        <strong class="revision-action">{actionLabel(r.action)}</strong>
        {isCurrent && <Pill tone="info">current</Pill>}
        <span class="muted small revision-meta">
          by {r.actor ? <Actor name={r.actor} /> : 'someone'} ·{' '}
          <time dateTime={r.createdAt} title={dateTime(r.createdAt)}>
            {relativeTime(r.createdAt)}
          </time>
        </span>
        <div class="toolbar-spacer" />
        <div class="revision-actions">
          <Button size="sm" aria-label={`View revision ${r.revision}`} onClick={onView}>
            View
          </Button>
          {/* Rolling back to the current revision changes nothing (D45), so it is not offered. */}
          {writable && !isCurrent && (
            <Button size="sm" aria-label={`Roll back to here: revision ${r.revision}`} onClick={onRollback}>
              Roll back to here
            </Button>
          )}
        </div>
      </div>
      <div class="revision-keys">
        <KeyList label="created" tone="ok" keys={r.created} />
        <KeyList label="updated" tone="warn" keys={r.updated} />
        <KeyList label="deleted" tone="bad" keys={r.deleted} />
      </div>
    </li>
  );
}

/** Keys shown before "+N more": an import can touch hundreds, which would bury the timeline. */
const KEYS_SHOWN = 8;

function KeyList({ label, tone, keys }: { label: string; tone: string; keys: string[] }) {
  const [all, setAll] = useState(false);
  if (keys.length === 0) return null;
  const shown = all ? keys : keys.slice(0, KEYS_SHOWN);
  return (
    <div class="keylist" data-testid={`keys-${label}`}>
      <span class={`keylist-label revision-tag revision-tag-${tone}`}>
        {label} ({keys.length})
      </span>
      {shown.map((k) => (
        <code key={k} class="chip">
          {k}
        </code>
      ))}
      {keys.length > shown.length && (
        <button type="button" class="linklike small" onClick={() => setAll(true)}>
          +{keys.length - shown.length} more
        </button>
      )}
    </div>
  );
}
