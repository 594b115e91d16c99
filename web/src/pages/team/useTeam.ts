import { listInvites, listMembers } from '../../api/team.js';
import { useAsync } from '../../hooks.js';

/** The workspace's members, and its pending invites when the caller is an Owner (only Owners may list them). */
export function useTeam(owner: boolean) {
  const members = useAsync(listMembers, []);
  const invites = useAsync(() => (owner ? listInvites() : Promise.resolve({ invites: [] })), [owner]);
  const reloadAll = () => Promise.all([members.reload(), invites.reload()]).then(() => undefined);
  return { members, invites, reloadAll };
}

/**
 * The workspace's Owners (name and email), for a member who needs someone to grant access: from the members
 * list, which every member may read (spec "Workspace endpoints"), so no endpoint of its own.
 */
export function useWorkspaceOwners() {
  const members = useAsync(listMembers, []);
  return { ...members, data: members.data?.members.filter((m) => m.wsRole === 'Owner') };
}
