import type { Member } from '@svcenv/contract';
import { removeMember, updateMember } from '../../api/team.js';
import { TemporaryGrant } from '../../components/Grant.js';
import { Table } from '../../components/Table.js';
import { dateOnly } from '../../lib/format.js';
import { expiryIn, extended } from '../../lib/grants.js';
import { useAction, useToast } from '../../toast.js';
import type { WsRole } from '../../types.js';
import { Button, Pill } from '../../ui.js';

/** The members: an Owner changes their roles and removes them (not themself). */
export function MembersTable({
  members,
  me,
  owner,
  grantSeconds = null,
  onChanged,
  onRemove,
}: {
  members: Member[];
  /** The signed-in user's id. */
  me: string;
  owner: boolean;
  /** D73: how long a role chosen here lasts; null: permanent. */
  grantSeconds?: number | null;
  onChanged: () => Promise<void>;
  onRemove: (m: Member) => void;
}) {
  return (
    <Table class="table-cards" columns={['Name', 'Role', 'Joined']} actions>
      {members.map((m) => (
        <tr key={m.id}>
          <td class="cell-head">
            <div class="member">
              <span class="avatar" aria-hidden="true">
                {m.name.slice(0, 1).toUpperCase()}
              </span>
              <div>
                <div>
                  {m.name} {m.id === me && <span class="muted small">(you)</span>}
                </div>
                <div class="muted small">{m.email}</div>
              </div>
            </div>
          </td>
          <td data-label="Role">
            {owner ? (
              <RoleSelect member={m} grantSeconds={grantSeconds} onChanged={onChanged} />
            ) : (
              <Pill tone={m.wsRole === 'Owner' ? 'info' : 'neutral'}>{m.wsRole}</Pill>
            )}
            <MemberExpiry member={m} canChange={owner && m.id !== me} onChanged={onChanged} />
          </td>
          <td class="small" data-label="Joined">
            {dateOnly(m.joinedAt)}
          </td>
          <td class="cell-actions">
            {owner && m.id !== me && (
              <Button size="sm" variant="ghost" class="danger-text" onClick={() => onRemove(m)}>
                Remove
              </Button>
            )}
          </td>
        </tr>
      ))}
    </Table>
  );
}

/**
 * D73: a temporary role's time left; an Owner extends it or ends it (a temporary Owner is a Member again, a
 * temporary Member leaves the workspace).
 */
function MemberExpiry({
  member: m,
  canChange,
  onChanged,
}: {
  member: Member;
  canChange: boolean;
  onChanged: () => Promise<void>;
}) {
  const toast = useToast();
  const act = useAction();
  const owner = m.wsRole === 'Owner';
  return (
    <TemporaryGrant
      expiresAt={m.expiresAt}
      canChange={canChange}
      what={owner ? `${m.name}'s Owner role` : `${m.name}'s membership`}
      endNote={
        owner
          ? `${m.name} is a Member again now, keeping their project roles.`
          : `${m.name} leaves the workspace now; their tokens stop working.`
      }
      onExtend={(sec) =>
        act(async () => {
          await updateMember(m.id, { wsRole: m.wsRole, expiresAt: extended(m.expiresAt!, sec) });
          toast(`${m.name}'s ${owner ? 'Owner role' : 'membership'} extended`);
          await onChanged();
        })
      }
      onEnd={async () => {
        if (owner) await updateMember(m.id, { wsRole: 'Member', expiresAt: null });
        else await removeMember(m.id);
        toast(owner ? `${m.name} is a Member again` : `${m.name} removed`);
        await onChanged();
      }}
    />
  );
}

/** A member's workspace role, changed as soon as another is chosen (for `grantSeconds`, or for good). */
function RoleSelect({
  member: m,
  grantSeconds,
  onChanged,
}: {
  member: Member;
  grantSeconds: number | null;
  onChanged: () => Promise<void>;
}) {
  const toast = useToast();
  const act = useAction();
  return (
    <select
      class="input input-sm"
      aria-label={`Role of ${m.name}`}
      value={m.wsRole}
      onChange={async (e) => {
        const role = e.currentTarget.value as WsRole;
        await act(async () => {
          await updateMember(m.id, { wsRole: role, expiresAt: expiryIn(grantSeconds) });
          toast(`${m.name} is now ${role}${grantSeconds === null ? '' : ' (temporary)'}`);
        });
        await onChanged();
      }}
    >
      <option>Owner</option>
      <option>Member</option>
    </select>
  );
}
