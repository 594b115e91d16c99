import type { Member } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { invite, listInvites, listMembers, removeMember, revokeInvite, updateMember } from '../api/team.js';
import { ApiError } from '../api.js';
import { useAsync, useSubmit } from '../hooks.js';
import { dateOnly, relativeTime } from '../lib/format.js';
import { isOwner, useSession } from '../session.js';
import { useAction, useToast } from '../toast.js';
import type { WsRole } from '../types.js';
import { Async, Button, Confirm, CopyButton, Empty, Field, FormError, PageHeader, Pill } from '../ui.js';

export function TeamPage() {
  const { user } = useSession();
  const owner = isOwner(user);
  const toast = useToast();
  const act = useAction();
  const members = useAsync(listMembers, []);
  const invites = useAsync(() => (owner ? listInvites() : Promise.resolve({ invites: [] })), [owner]);
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
            <table class="table table-cards">
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
                    <td class="cell-head">
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
                    <td data-label="Role">
                      {owner ? (
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
                    <td class="small" data-label="Joined">
                      {dateOnly(m.joinedAt)}
                    </td>
                    <td class="cell-actions">
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
                  <table class="table table-cards">
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

function InviteForm({ onInvited }: { onInvited: () => Promise<void> }) {
  const toast = useToast();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<WsRole>('Member');
  const { busy, error, submit } = useSubmit();
  // The last invite's link when the server could not email it (ADR 0012): shown until the next invite.
  const [handOver, setHandOver] = useState<{ email: string; url: string } | null>(null);
  return (
    <form
      class="card invite-card"
      onSubmit={submit(async () => {
        setHandOver(null);
        const res = await invite({ email, wsRole: role });
        if ('userId' in res) toast(`${res.name} added to the workspace`);
        else if (res.inviteUrl) setHandOver({ email: res.email, url: res.inviteUrl });
        else toast(`Invite emailed to ${res.email}`);
        setEmail('');
        await onInvited();
      })}
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
      {handOver && (
        <div class="alert alert-warn invite-link" role="status" data-testid="invite-link">
          <p>
            <strong>No email was sent:</strong> this server has no email set up (SMTP_URL), so the invite for{' '}
            {handOver.email} is waiting. Send them this link yourself; it works once and expires in 7 days.
          </p>
          <div class="once-row">
            <code class="once-value" data-copy-source={handOver.url.slice(0, 16)}>
              {handOver.url}
            </code>
            <CopyButton text={handOver.url} label="Copy invite link" />
          </div>
          <p class="muted small">
            The link is shown only now. If it gets lost, invite the same address again: the new link replaces it.
          </p>
        </div>
      )}
      {error instanceof ApiError && error.code === 'PLAN_LIMIT' && (
        <p class="note">Your plan's member limit is reached; pending invites count toward it.</p>
      )}
    </form>
  );
}
