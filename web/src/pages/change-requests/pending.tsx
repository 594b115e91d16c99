import type { Environment, Project, Variable } from '@svcenv/contract';
import { createContext } from 'preact';
import { useContext, useState } from 'preact/hooks';
import { type ChangeRequestBody, openChangeRequest } from '../../api/change-requests.js';
import type { UpdateVarBody } from '../../api/variables.js';
import { listVars } from '../../api/variables.js';
import { ApiError } from '../../api.js';
import { useSaveValidated } from '../../components/Unresolved.js';
import { useSubmit } from '../../hooks.js';
import { writesNeedApproval } from '../../lib/access.js';
import { DOTS } from '../../lib/mask.js';
import { navigate } from '../../router.js';
import { useToast } from '../../toast.js';
import { Button, ErrorBanner, Field, Modal } from '../../ui.js';
import type { VarListing } from '../variables/useVarListing.js';
import { requestsChanged } from './open-counts.js';

type VarType = Variable['type'];

/** One change gathered for a change request: a value to set, or a key to delete. */
export type PendingChange =
  | { op: 'set'; key: string; value: string; type: VarType; expiresAt?: string }
  | { op: 'delete'; key: string };

/**
 * The variables screen's change set when the environment requires approval and the user may not write it
 * directly (D47, ADR 0013): every edit is gathered here instead of being written, then sent as one change
 * request. Null when writes apply directly.
 */
export interface Pending {
  changes: PendingChange[];
  /** Adds or replaces a value to set (an "Add" of the variables screen). */
  set: (item: { key: string; value: string; type: VarType }) => void;
  /** An edit of an existing variable: a change request always carries the value, so a hidden one is read. */
  update: (key: string, body: UpdateVarBody) => Promise<void>;
  remove: (keys: string[]) => void;
}

export const PendingCtx = createContext<Pending | null>(null);
/** The change set of the environment on screen, or null when its writes apply directly. */
export const usePending = () => useContext(PendingCtx);

const keyed = (changes: PendingChange[], next: PendingChange[]) => [
  ...changes.filter((c) => !next.some((n) => n.key === c.key)),
  ...next,
];

/** The state behind the pending-changes bar; the bar itself is <PendingBar>. */
export function usePendingChanges(project: Project, env: Environment, listing: VarListing) {
  const toast = useToast();
  const [changes, setChanges] = useState<PendingChange[]>([]);
  const active = writesNeedApproval(project, env);
  const add = (next: PendingChange[], what: string) => {
    setChanges((c) => keyed(c, next));
    toast(`${what}: pending until you submit it for review`);
  };
  /** The value an edit starts from: a queued one, the plaintext shown, or (a hidden secret) an audited read. */
  const currentValue = async (key: string): Promise<string> => {
    const queued = changes.find((c) => c.key === key);
    if (queued?.op === 'set') return queued.value;
    const known = listing.plain?.get(key) ?? listing.vars?.find((v) => v.key === key && v.type === 'plain');
    if (known) return known.value;
    const all = await listVars(project.id, env.name, true);
    const found = all.vars.find((v) => v.key === key);
    if (!found) throw new Error(`${key} is no longer in ${env.name}`);
    return found.value;
  };
  const pending: Pending = {
    changes,
    set: (item) => add([{ op: 'set', ...item }], item.key),
    update: async (key, body) => {
      if (body.clearExpiry) {
        throw new Error('A change request cannot clear an expiry; an Owner or project Admin can, directly.');
      }
      const queued = changes.find((c) => c.key === key);
      const v = listing.vars?.find((x) => x.key === key);
      const type = body.type ?? (queued?.op === 'set' ? queued.type : v?.type) ?? 'secret';
      const value = body.value ?? (await currentValue(key));
      const expiresAt = body.expiresAt ?? (queued?.op === 'set' ? queued.expiresAt : undefined);
      add([{ op: 'set', key, value, type, ...(expiresAt ? { expiresAt } : {}) }], key);
    },
    remove: (keys) =>
      add(
        keys.map((key) => ({ op: 'delete', key })),
        keys.length === 1 ? `${keys[0]} deleted` : `${keys.length} deletions`,
      ),
  };
  return {
    pending: active ? pending : null,
    drop: (key: string) => setChanges((c) => c.filter((x) => x.key !== key)),
    clear: () => setChanges([]),
  };
}

/**
 * Above the variables of an environment that requires approval: what the mode means, and once there are
 * changes, "N changes pending: review and submit" with the list, each removable.
 */
export function PendingBar({
  project,
  env,
  state,
  listing,
}: {
  project: Project;
  env: Environment;
  state: ReturnType<typeof usePendingChanges>;
  listing: VarListing;
}) {
  const [reviewing, setReviewing] = useState(false);
  if (!state.pending) return null;
  const { changes } = state.pending;
  return (
    <section class="pending-bar" aria-label="Pending changes" data-testid="pending-bar">
      {changes.length === 0 ? (
        <p class="pending-mode">
          <strong>{env.name} requires approval.</strong> Your edits are gathered here and sent as a change request that
          an Owner or project Admin approves.
        </p>
      ) : (
        <>
          <div class="pending-head">
            <strong>
              {changes.length} {changes.length === 1 ? 'change' : 'changes'} pending: review and submit
            </strong>
            <div class="toolbar-spacer" />
            <Button size="sm" variant="primary" onClick={() => setReviewing(true)}>
              Review and submit
            </Button>
            <Button size="sm" variant="ghost" onClick={state.clear}>
              Discard all
            </Button>
          </div>
          <ChangeList changes={changes} onDrop={state.drop} />
        </>
      )}
      {reviewing && (
        <SubmitDialog
          project={project}
          env={env.name}
          changes={changes}
          listing={listing}
          onDrop={state.drop}
          onClose={() => setReviewing(false)}
          onSubmitted={() => {
            setReviewing(false);
            state.clear();
          }}
        />
      )}
    </section>
  );
}

function ChangeList({ changes, onDrop }: { changes: PendingChange[]; onDrop: (key: string) => void }) {
  return (
    <ul class="pending-list">
      {changes.map((c) => (
        <li key={c.key} class={`pending-item pending-${c.op}`} data-testid={`pending-${c.key}`}>
          <span class="pending-op">{c.op === 'set' ? 'set' : 'delete'}</span>
          <code class="var-key">{c.key}</code>
          {c.op === 'set' && <code class="pending-value">{c.type === 'secret' ? DOTS : c.value || '(empty)'}</code>}
          <button
            type="button"
            class="icon-btn"
            aria-label={`Remove the change to ${c.key}`}
            onClick={() => onDrop(c.key)}
          >
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}

/** The message, then `POST .../change-requests` with the listing's revision in If-Match (D46). */
function SubmitDialog({
  project,
  env,
  changes,
  listing,
  onDrop,
  onClose,
  onSubmitted,
}: {
  project: Project;
  env: string;
  changes: PendingChange[];
  listing: VarListing;
  onDrop: (key: string) => void;
  onClose: () => void;
  onSubmitted: () => void;
}) {
  const toast = useToast();
  const [message, setMessage] = useState('');
  const { busy, error, setError, submit } = useSubmit();
  const save = useSaveValidated();
  const stale = error instanceof ApiError && error.code === 'PRECONDITION_FAILED';
  const send = submit(async () => {
    const body: ChangeRequestBody = {
      message,
      set: changes.flatMap((c) =>
        c.op === 'set'
          ? [{ key: c.key, value: c.value, type: c.type, ...(c.expiresAt ? { expiresAt: c.expiresAt } : {}) }]
          : [],
      ),
      delete: changes.flatMap((c) => (c.op === 'delete' ? [c.key] : [])),
    };
    // The revision the listing showed: a change made since is a 412, never a request built on a stale view.
    const opened = await save((validate) =>
      openChangeRequest(project.id, env, body, listing.revision ?? 0, { validate }),
    );
    requestsChanged();
    onSubmitted();
    toast(`Change request opened on ${env}: an Owner or project Admin will review it`, 'ok', {
      label: 'View',
      run: async () => navigate(`/projects/${project.id}?tab=requests&env=${encodeURIComponent(opened.env)}`),
    });
  });
  return (
    <Modal
      title={`Submit ${changes.length} ${changes.length === 1 ? 'change' : 'changes'} for review`}
      onClose={onClose}
    >
      <form class="stack" onSubmit={send}>
        <ChangeList changes={changes} onDrop={onDrop} />
        <Field label="Message" name="message" error={error} hint="What the change is for; the approvers read it.">
          <textarea
            class="input"
            name="message"
            rows={3}
            required
            maxLength={2000}
            value={message}
            onInput={(e) => setMessage(e.currentTarget.value)}
          />
        </Field>
        {stale ? (
          <div class="alert alert-warn" role="alert" data-testid="submit-stale">
            <p>
              {env} changed after you loaded it, so nothing was submitted. Review its variables again: your pending
              changes are kept.
            </p>
            <div class="alert-actions">
              <Button
                size="sm"
                variant="primary"
                onClick={async () => {
                  await listing.load();
                  setError(undefined);
                  onClose();
                }}
              >
                Review again
              </Button>
            </div>
          </div>
        ) : (
          error !== undefined &&
          !(error instanceof ApiError && error.field === 'message') && <ErrorBanner error={error} />
        )}
        <div class="row-end">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" busy={busy} disabled={changes.length === 0 || stale}>
            Submit for review
          </Button>
        </div>
      </form>
    </Modal>
  );
}

/** Beside the Owner's approval switch (D47): what turning it on or off means, in one line. */
export function ApprovalNote({ env }: { env: Environment }) {
  return (
    <p class="note approval-note" data-testid="approval-note">
      {env.requireApproval
        ? `Approval is on: changes to ${env.name} by Developers and tokens become change requests that an Owner or project Admin approves.`
        : `With approval on, changes to ${env.name} by Developers and tokens become change requests that an Owner or project Admin approves.`}
    </p>
  );
}
