import type { Member } from '@svcenv/contract';
import { updateMember } from '../../api/team.js';
import { Table } from '../../components/Table.js';
import { dateOnly } from '../../lib/format.js';
import { useAction, useToast } from '../../toast.js';
import type { WsRole } from '../../types.js';
import { Button, Pill } from '../../ui.js';

/** The members: an Owner changes their roles and removes them (not themself). */
export function MembersTable({
  members,
  me,
  owner,
  onChanged,
  onRemove,
}: {
  members: Member[];
  /** The signed-in user's id. */
  me: string;
  owner: boolean;
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
              <RoleSelect member={m} onChanged={onChanged} />
            ) : (
              <Pill tone={m.wsRole === 'Owner' ? 'info' : 'neutral'}>{m.wsRole}</Pill>
            )}
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

/** A member's workspace role, changed as soon as another is chosen. */
function RoleSelect({ member: m, onChanged }: { member: Member; onChanged: () => Promise<void> }) {
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
          await updateMember(m.id, { wsRole: role });
          toast(`${m.name} is now ${role}`);
        });
        await onChanged();
      }}
    >
      <option>Owner</option>
      <option>Member</option>
    </select>
  );
}
