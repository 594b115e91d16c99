import type { Member } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { removeMember } from '../../api/team.js';
import { DurationSelect } from '../../components/Grant.js';
import { isOwner, useSession } from '../../session.js';
import { useToast } from '../../toast.js';
import { Async, Confirm, Empty, PageHeader } from '../../ui.js';
import { InviteForm } from './InviteForm.js';
import { InvitesTable } from './InvitesTable.js';
import { MembersTable } from './MembersTable.js';
import { useTeam } from './useTeam.js';

export function TeamPage() {
  const { user } = useSession();
  const owner = isOwner(user);
  const toast = useToast();
  const { members, invites, reloadAll } = useTeam(owner);
  const [removing, setRemoving] = useState<Member | null>(null);
  // D73: how long a role an Owner chooses in the table lasts; null: permanent.
  const [grantSeconds, setGrantSeconds] = useState<number | null>(null);
  return (
    <>
      <PageHeader
        title="Team"
        subtitle={`Members of ${user.workspaceName}. Project access is set on each project's Members tab.`}
      />
      {owner && <InviteForm onInvited={reloadAll} />}
      <div class="section-head">
        <h2 class="section-title">Members</h2>
        {owner && (
          <div class="grant-bar" data-testid="grant-duration">
            <DurationSelect label="Role changes last" onSeconds={setGrantSeconds} />
          </div>
        )}
      </div>
      <Async state={members}>
        {({ members: list }) => (
          <MembersTable
            members={list}
            me={user.id}
            owner={owner}
            grantSeconds={grantSeconds}
            onChanged={members.reload}
            onRemove={setRemoving}
          />
        )}
      </Async>
      {owner && (
        <>
          <h2 class="section-title">Pending invites</h2>
          <Async state={invites}>
            {({ invites: list }) =>
              list.length === 0 ? (
                <Empty title="No pending invites">
                  Invites to people without an account appear here until they accept.
                </Empty>
              ) : (
                <InvitesTable invites={list} onChanged={invites.reload} />
              )
            }
          </Async>
        </>
      )}
      {removing && (
        <Confirm
          title={`Remove ${removing.name}?`}
          action="Remove"
          body={<p>They lose access to this workspace and its projects immediately. Their tokens stop working.</p>}
          onClose={() => setRemoving(null)}
          onConfirm={async () => {
            await removeMember(removing.id);
            setRemoving(null);
            toast(`${removing.name} removed`);
            await members.reload();
          }}
        />
      )}
    </>
  );
}
