import { useState } from 'preact/hooks';
import { ApiError, api, seg } from '../api.js';
import { dateOnly, relativeTime } from '../lib/format.js';
import { isOwner, useSession } from '../session.js';
import type { Member, PendingInvite, WsRole } from '../types.js';
import { Async, Button, Confirm, Empty, Field, FormError, PageHeader, Pill, useAsync, useToast } from '../ui.js';

export function TeamPage() {
  const { user } = useSession();
  const owner = isOwner(user);
  const toast = useToast();
  const members = useAsync(() => api.get<{ members: Member[] }>('/workspace/members'), []);
  const invites = useAsync(
    () => (owner ? api.get<{ invites: PendingInvite[] }>('/workspace/invites') : Promise.resolve({ invites: [] })),
    [owner],
  );
  const [removing, setRemoving] = useState<Member | null>(null);
  return (
    <>
      <PageHeader
        title="Team"
        subtitle={`Members of ${user.workspaceName}. Project access is set on each project's Members tab.`}
      />
      {owner && (
        <InviteForm onInvited={() => Promise.all([members.reload(), invites.reload()]).then(() => undefined)} />
      )}
      <h2 class="section-title">Members</h2>
      <Async state={members}>
        {({ members: list }) => (
          <div class="table-wrap">
            <table class="table">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Role</th>
                  <th>Joined</th>
                  <th>
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((m) => (
                  <tr key={m.id}>
                    <td>
                      <div class="member">
                        <span class="avatar" aria-hidden="true">
                          {m.name.slice(0, 1).toUpperCase()}
                        </span>
                        <div>
                          <div>
                            {m.name} {m.id === user.id && <span class="muted small">(you)</span>}
                          </div>
                          <div class="muted small">{m.email}</div>
                        </div>
                      </div>
                    </td>
                    <td>
                      {owner ? (
                        <select
                          class="input input-sm"
                          aria-label={`Role of ${m.name}`}
                          value={m.wsRole}
                          onChange={async (e) => {
                            const role = e.currentTarget.value as WsRole;
                            try {
                              await api.patch(`/workspace/members/${seg(m.id)}`, { wsRole: role });
                              toast(`${m.name} is now ${role}`);
                            } catch (err) {
                              toast(err instanceof Error ? err.message : String(err), 'error');
                            }
                            await members.reload();
                          }}
                        >
                          <option>Owner</option>
                          <option>Member</option>
                        </select>
                      ) : (
                        <Pill tone={m.wsRole === 'Owner' ? 'info' : 'neutral'}>{m.wsRole}</Pill>
                      )}
                    </td>
                    <td class="small">{dateOnly(m.joinedAt)}</td>
                    <td>
                      {owner && m.id !== user.id && (
                        <Button size="sm" variant="ghost" class="danger-text" onClick={() => setRemoving(m)}>
                          Remove
                        </Button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
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
                <div class="table-wrap">
                  <table class="table">
                    <thead>
                      <tr>
                        <th>Email</th>
                        <th>Role</th>
                        <th>Sent</th>
                        <th>Expires</th>
                        <th>
                          <span class="sr-only">Actions</span>
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {list.map((i) => (
                        <tr key={i.id}>
                          <td>{i.email}</td>
                          <td>
                            <Pill>{i.wsRole}</Pill>
                          </td>
                          <td class="small">{relativeTime(i.createdAt)}</td>
                          <td class="small">{dateOnly(i.expiresAt)}</td>
                          <td>
                            <Button
                              size="sm"
                              variant="ghost"
                              class="danger-text"
                              onClick={async () => {
                                await api.del(`/workspace/invites/${seg(i.id)}`).catch(() => undefined);
                                toast(`Invite to ${i.email} revoked`);
                                await invites.reload();
                              }}
                            >
                              Revoke
                            </Button>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
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
            await api.del(`/workspace/members/${seg(removing.id)}`);
            setRemoving(null);
            toast(`${removing.name} removed`);
            await members.reload();
          }}
        />
      )}
    </>
  );
}

function InviteForm({ onInvited }: { onInvited: () => Promise<void> }) {
  const toast = useToast();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<WsRole>('Member');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <form
      class="card invite-card"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          const res = await api.post<{ invited?: true; name?: string }>('/workspace/invites', { email, wsRole: role });
          toast(res.invited ? `Invite sent to ${email}` : `${res.name} added to the workspace`);
          setEmail('');
          await onInvited();
        } catch (err) {
          setError(err);
        }
        setBusy(false);
      }}
    >
      <h2 class="card-title">Invite someone</h2>
      <div class="inline-form">
        <Field label="Email" name="email" error={error}>
          <input
            class="input"
            type="email"
            name="email"
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
            required
          />
        </Field>
        <Field label="Role" name="wsRole" error={error}>
          <select class="input" value={role} onChange={(e) => setRole(e.currentTarget.value as WsRole)}>
            <option>Member</option>
            <option>Owner</option>
          </select>
        </Field>
        <Button type="submit" variant="primary" busy={busy}>
          Send invite
        </Button>
      </div>
      <FormError error={error} fields={['email', 'wsRole']} />
      {error instanceof ApiError && error.code === 'PLAN_LIMIT' && (
        <p class="note">Your plan's member limit is reached; pending invites count toward it.</p>
      )}
    </form>
  );
}
