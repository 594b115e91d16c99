import { renameWorkspace } from '../../api/workspace.js';
import { isOwner, useSession } from '../../session.js';
import { NameForm } from './NameForm.js';

/** The workspace's name: an Owner renames it, anyone else sees it. */
export function WorkspaceName() {
  const { user } = useSession();
  const owner = isOwner(user);
  return (
    <NameForm
      title="Workspace"
      initial={user.workspaceName}
      save={(name) => renameWorkspace({ name })}
      saved="Workspace renamed"
      submitLabel="Rename"
      hint={owner ? undefined : 'Only Owners can rename the workspace.'}
      readOnly={!owner}
    />
  );
}
