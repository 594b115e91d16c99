import { listInvites, listMembers } from '../../api/team.js';
import { useAsync } from '../../hooks.js';

/** The workspace's members, and its pending invites when the caller is an Owner (only Owners may list them). */
export function useTeam(owner: boolean) {
  const members = useAsync(listMembers, []);
  const invites = useAsync(() => (owner ? listInvites() : Promise.resolve({ invites: [] })), [owner]);
  const reloadAll = () => Promise.all([members.reload(), invites.reload()]).then(() => undefined);
  return { members, invites, reloadAll };
}
