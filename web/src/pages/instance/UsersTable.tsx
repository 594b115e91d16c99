import type { AdminUser } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { makeResetLink } from '../../api/admin.js';
import { OnceSecretDialog } from '../../components/OnceSecretDialog.js';
import { Table } from '../../components/Table.js';
import { dateOnly } from '../../lib/format.js';
import { useAction } from '../../toast.js';
import { Button, Pill } from '../../ui.js';

/** Every account; "Reset link" makes a D54 link for someone whose server cannot email one. */
export function UsersTable({ users }: { users: AdminUser[] }) {
  const act = useAction();
  const [link, setLink] = useState<{ user: AdminUser; link: string } | null>(null);
  return (
    <>
      <Table
        class="table-cards"
        columns={['User', 'Role', 'Two-factor', 'Workspaces', 'Joined']}
        actions
        testId="instance-users"
      >
        {users.map((u) => (
          <tr key={u.id}>
            <td class="cell-head">
              <div>{u.name}</div>
              <div class="muted small">{u.email}</div>
            </td>
            <td data-label="Role">
              {u.instanceAdmin ? <Pill tone="info">Administrator</Pill> : <span class="muted small">User</span>}
            </td>
            <td data-label="Two-factor">{u.mfaEnabled ? 'On' : 'Off'}</td>
            <td data-label="Workspaces">{u.workspaces}</td>
            <td class="small" data-label="Joined">
              {dateOnly(u.createdAt)}
            </td>
            <td class="cell-actions">
              <Button
                size="sm"
                aria-label={`Reset link for ${u.email}`}
                onClick={() =>
                  act(async () => {
                    const res = await makeResetLink(u.id);
                    setLink({ user: u, link: res.link });
                  })
                }
              >
                Reset link
              </Button>
            </td>
          </tr>
        ))}
      </Table>
      {link && (
        <OnceSecretDialog
          title={`Password reset link for ${link.user.name}`}
          value={link.link}
          note="Shown only now. Send it to them yourself: it works once, for one hour, and voids any older link."
          onClose={() => setLink(null)}
        >
          <p class="muted small once-after">
            Opening it lets them choose a new password; every session of theirs ends. With two-factor on, they also need
            a code from their app or a backup code.
          </p>
        </OnceSecretDialog>
      )}
    </>
  );
}
