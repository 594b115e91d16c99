import { revokeInvite } from '../../api/team.js';
import { Table } from '../../components/Table.js';
import { dateOnly, relativeTime } from '../../lib/format.js';
import { useToast } from '../../toast.js';
import type { PendingInvite } from '../../types.js';
import { Button, Pill } from '../../ui.js';

/** Invites not accepted yet, each revocable. */
export function InvitesTable({ invites, onChanged }: { invites: PendingInvite[]; onChanged: () => Promise<void> }) {
  const toast = useToast();
  return (
    <Table class="table-cards" columns={['Email', 'Role', 'Sent', 'Expires']} actions>
      {invites.map((i) => (
        <tr key={i.id}>
          <td class="cell-head">{i.email}</td>
          <td data-label="Role">
            <Pill>{i.wsRole}</Pill>
          </td>
          <td class="small" data-label="Sent">
            {relativeTime(i.createdAt)}
          </td>
          <td class="small" data-label="Expires">
            {dateOnly(i.expiresAt)}
          </td>
          <td class="cell-actions">
            <Button
              size="sm"
              variant="ghost"
              class="danger-text"
              onClick={async () => {
                await revokeInvite(i.id).catch(() => undefined);
                toast(`Invite to ${i.email} revoked`);
                await onChanged();
              }}
            >
              Revoke
            </Button>
          </td>
        </tr>
      ))}
    </Table>
  );
}
