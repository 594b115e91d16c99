import type { Environment, Project } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import {
  type ChangeRequest,
  type ChangeRequestStatus,
  getChangeRequest,
  listChangeRequests,
} from '../../api/change-requests.js';
import { EnvTabs } from '../../components/EnvTabs.js';
import { useAsync } from '../../hooks.js';
import { relativeTime } from '../../lib/format.js';
import { Async, Empty, ErrorBanner, Pill } from '../../ui.js';
import { RequestDetail, STATUS_TONE } from './RequestDetail.js';

const FILTERS: { id: ChangeRequestStatus | 'all'; label: string }[] = [
  { id: 'open', label: 'Open' },
  { id: 'applied', label: 'Applied' },
  { id: 'rejected', label: 'Rejected' },
  { id: 'withdrawn', label: 'Withdrawn' },
  { id: 'all', label: 'All' },
];

/**
 * The Change requests tab (D47): the environments with their number of open requests, the chosen one's
 * requests by status, and a request's detail (its diff, and approve, reject or withdraw as the user may).
 */
export function ChangeRequestsView({
  project,
  envs,
  env,
  onEnv,
  counts,
  onApplied,
  request,
  onRequestClosed,
}: {
  project: Project;
  envs: Environment[];
  env: string | null;
  onEnv: (e: string) => void;
  /** Open requests per environment, for the badges. */
  counts: Record<string, number>;
  /** After an approval: shows the environment's variables. */
  onApplied: (env: string) => void;
  /** A request to open at once (`?request=<id>`, linked from the audit log), and what closing it does. */
  request?: string | null;
  onRequestClosed?: () => void;
}) {
  const current = envs.find((e) => e.name === env);
  return (
    <>
      <EnvTabs envs={envs} current={current?.name ?? null} onSelect={onEnv} counts={counts} />
      {current ? (
        <EnvRequests
          key={current.name}
          project={project}
          env={current}
          onApplied={onApplied}
          linked={request ?? null}
          onLinkedClosed={onRequestClosed}
        />
      ) : (
        <Empty title="No environments for you">You have no access to any environment of this project.</Empty>
      )}
    </>
  );
}

function EnvRequests({
  project,
  env,
  onApplied,
  linked,
  onLinkedClosed,
}: {
  project: Project;
  env: Environment;
  onApplied: (env: string) => void;
  linked: string | null;
  onLinkedClosed: (() => void) | undefined;
}) {
  const [filter, setFilter] = useState<ChangeRequestStatus | 'all'>('open');
  const [open, setOpen] = useState<ChangeRequest | null>(null);
  // A linked request opens whatever its status, without changing the list's filter.
  const link = useAsync(
    () => (linked ? getChangeRequest(project.id, env.name, linked) : Promise.resolve(null)),
    [project.id, env.name, linked],
  );
  useEffect(() => {
    if (link.data) setOpen(link.data);
  }, [link.data]);
  const close = () => {
    setOpen(null);
    if (linked) onLinkedClosed?.();
  };
  const list = useAsync(
    () => listChangeRequests(project.id, env.name, filter === 'all' ? undefined : filter),
    [project.id, env.name, filter],
  );
  return (
    <section class="panel" aria-label={`Change requests of ${env.name}`}>
      <p class="note">
        {env.requireApproval
          ? `${env.name} requires approval: Developers' and tokens' changes arrive here for an Owner or project Admin to approve.`
          : `${env.name} does not require approval; change requests opened on it are still reviewed here.`}
      </p>
      {linked && link.error ? <ErrorBanner error={link.error} onRetry={link.reload} /> : null}
      <fieldset class="segmented">
        <legend class="sr-only">Status</legend>
        {FILTERS.map((f) => (
          <button
            type="button"
            key={f.id}
            class="segment"
            aria-pressed={filter === f.id}
            onClick={() => setFilter(f.id)}
          >
            {f.label}
          </button>
        ))}
      </fieldset>
      <Async state={list}>
        {({ changeRequests }) =>
          changeRequests.length === 0 ? (
            <Empty title={filter === 'all' ? 'No change requests' : `No ${filter} change requests`}>
              {filter === 'open' ? `Nothing waits for review in ${env.name}.` : null}
            </Empty>
          ) : (
            <ul class="cr-list" aria-label="Change requests">
              {changeRequests.map((cr) => (
                <li key={cr.id}>
                  <button type="button" class="cr-item" data-testid={`cr-${cr.id}`} onClick={() => setOpen(cr)}>
                    <span class="cr-line">
                      <Pill tone={STATUS_TONE[cr.status]}>{cr.status}</Pill>
                      <span class="cr-message">{cr.message.split('\n')[0]}</span>
                    </span>
                    <span class="muted small">
                      {cr.author} · {relativeTime(cr.createdAt)} · {cr.changes.length}{' '}
                      {cr.changes.length === 1 ? 'change' : 'changes'}:{' '}
                      {cr.changes.map((c) => `${c.op === 'delete' ? '−' : ''}${c.key}`).join(', ')}
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Async>
      {open && (
        <RequestDetail
          project={project}
          request={open}
          onClose={close}
          onChanged={list.reload}
          onShowVariables={() => onApplied(env.name)}
        />
      )}
    </section>
  );
}
