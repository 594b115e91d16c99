import type { Environment, Project, Variable } from '@svcenv/contract';
import { deleteVar, deleteVars, updateVar } from '../../api/variables.js';
import { canWriteDirectly } from '../../lib/access.js';
import { useToast } from '../../toast.js';
import { Confirm } from '../../ui.js';
import { usePending } from '../change-requests/pending.js';
import { HistoryModal } from '../History.js';
import { ImportModal } from '../Import.js';
import { DeletedKeysModal } from './DeletedKeys.js';
import { restoreDeleted } from './restore.js';

/** The dialog open over an environment's variables, if any. */
export type VarDialog =
  | { kind: 'history'; key: string }
  | { kind: 'import' }
  | { kind: 'delete'; key: string }
  | { kind: 'bulkDelete'; keys: string[] }
  | { kind: 'makePlain'; key: string }
  | { kind: 'copy'; v: Variable }
  | { kind: 'deleted' };

export function VarDialogs({
  dialog,
  project,
  env,
  isProtected,
  envs,
  canWrite,
  onClose,
  onChanged,
  onBulkDeleted,
  onCopy,
  onHistory,
}: {
  dialog: VarDialog | null;
  project: Project;
  env: string;
  /** A protected environment: its confirmations say so (the add and edit forms ask separately). */
  isProtected: boolean;
  envs: Environment[];
  /** Write on `env`: restoring a version needs it. */
  canWrite: boolean;
  onClose: () => void;
  /** Reloads the listing after a change. */
  onChanged: () => Promise<void>;
  onBulkDeleted: () => void;
  /** Reveals and copies a masked secret, once the user agreed to reveal it. */
  onCopy: (v: Variable) => Promise<void>;
  onHistory: (key: string) => void;
}) {
  const toast = useToast();
  // Approval required and no direct write (D47): changes join the pending change request; no restore.
  const pending = usePending();
  if (!dialog) return null;
  const protectedNote = isProtected && !pending && (
    <p class="alert alert-warn" data-testid="protected-note">
      {env} is protected: services pulling it get this change on their next pull.
    </p>
  );
  // After a delete, "Undo" restores each key from its history; the listing then reloads.
  const undo = (keys: string[]) => ({
    label: 'Undo',
    run: async () => {
      for (const key of keys) await restoreDeleted(project.id, env, key);
      toast(keys.length === 1 ? `${keys[0]} restored` : `${keys.length} variables restored`);
      await onChanged();
    },
  });
  switch (dialog.kind) {
    case 'history':
      return (
        <HistoryModal
          projectId={project.id}
          env={env}
          varKey={dialog.key}
          canRestore={canWrite && !pending}
          onClose={onClose}
          onRestored={async () => {
            onClose();
            toast(`${dialog.key} restored`);
            await onChanged();
          }}
        />
      );
    case 'import':
      // Only environments the import could write to directly are offered as targets.
      return (
        <ImportModal
          project={project}
          envs={envs.filter((e) => canWriteDirectly(project, e))}
          defaultEnv={env}
          onClose={onClose}
          onSaved={onChanged}
        />
      );
    case 'delete':
      return (
        <Confirm
          title={`Delete ${dialog.key}?`}
          action="Delete"
          body={
            pending ? (
              <p>
                The deletion joins your change request: {dialog.key} stays in {env} until an approver applies the
                request. Until you submit it, you can take it out of the pending changes.
              </p>
            ) : (
              <>
                {protectedNote}
                <p>
                  It stays in the history of {env}: Undo right after, or restore it later from <em>Deleted keys</em>.
                </p>
              </>
            )
          }
          onClose={onClose}
          onConfirm={async () => {
            if (pending) {
              pending.remove([dialog.key]);
              return onClose();
            }
            await deleteVar(project.id, env, dialog.key);
            onClose();
            toast(`${dialog.key} deleted`, 'ok', undo([dialog.key]));
            await onChanged();
          }}
        />
      );
    case 'bulkDelete': {
      const { keys } = dialog;
      return (
        <Confirm
          title={`Delete ${keys.length} variables?`}
          action={`Delete ${keys.length}`}
          body={
            <>
              {protectedNote}
              <p>
                {keys.slice(0, 8).join(', ')}
                {keys.length > 8 ? ` and ${keys.length - 8} more` : ''}{' '}
                {pending
                  ? `join your change request as deletions; they stay in ${env} until an approver applies it.`
                  : `will be deleted from ${env}: Undo right after, or restore them later from Deleted keys.`}
              </p>
            </>
          }
          onClose={onClose}
          onConfirm={async () => {
            if (pending) {
              pending.remove(keys);
              onBulkDeleted();
              return onClose();
            }
            const res = await deleteVars(project.id, env, keys);
            onClose();
            onBulkDeleted();
            toast(`${res.deleted} deleted`, 'ok', undo(keys));
            await onChanged();
          }}
        />
      );
    }
    case 'makePlain':
      // Plain values are shown to everyone who can read the environment, in listings, exports and history.
      return (
        <Confirm
          title={`Make ${dialog.key} plain?`}
          action="Make plain"
          body={
            <>
              {protectedNote}
              <p>
                Its value will be shown unmasked to everyone who can read {env}: in the listing, in exports and in its
                history, without revealing. Keep it secret if it is a password, a token or a key.
              </p>
            </>
          }
          onClose={onClose}
          onConfirm={async () => {
            if (pending) {
              await pending.update(dialog.key, { type: 'plain' });
              return onClose();
            }
            await updateVar(project.id, env, dialog.key, { type: 'plain' });
            onClose();
            toast(`${dialog.key} is now plain`);
            await onChanged();
          }}
        />
      );
    case 'copy':
      return (
        <Confirm
          title={`Reveal ${dialog.v.key} to copy it?`}
          action="Reveal and copy"
          body={<p>The value is masked. Copying reveals it on this screen (recorded as a reveal in the audit log).</p>}
          onClose={onClose}
          onConfirm={async () => {
            await onCopy(dialog.v);
            onClose();
          }}
        />
      );
    case 'deleted':
      return (
        <DeletedKeysModal
          project={project}
          env={env}
          canRestore={canWrite && !pending}
          onClose={onClose}
          onHistory={onHistory}
          onRestored={async (key) => {
            toast(`${key} restored`);
            await onChanged();
          }}
        />
      );
  }
}
