import { useState } from 'preact/hooks';
import { invite } from '../../api/team.js';
import { ApiError } from '../../api.js';
import { PlanRemedy } from '../../components/PlanRemedy.js';
import { EmailField } from '../../components/TextField.js';
import { useSubmit } from '../../hooks.js';
import { useToast } from '../../toast.js';
import type { WsRole } from '../../types.js';
import { Button, CopyButton, Field, FormError } from '../../ui.js';

/** An Owner invites by email: an existing account joins at once, anyone else gets an invite link. */
export function InviteForm({ onInvited }: { onInvited: () => Promise<void> }) {
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
        <EmailField value={email} onValue={setEmail} error={error} />
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
      {handOver && <InviteLink {...handOver} />}
      {error instanceof ApiError && error.code === 'PLAN_LIMIT' && (
        <p class="note">
          Your plan's member limit is reached; pending invites count toward it. <PlanRemedy />
        </p>
      )}
    </form>
  );
}

/** The link of an invite the server could not email, for the Owner to hand over. */
function InviteLink({ email, url }: { email: string; url: string }) {
  return (
    <div class="alert alert-warn invite-link" role="status" data-testid="invite-link">
      <p>
        <strong>No email was sent:</strong> this server has no email set up (SMTP_URL), so the invite for {email} is
        waiting. Send them this link yourself; it works once and expires in 7 days.
      </p>
      <div class="once-row">
        <code class="once-value" data-copy-source={url.slice(0, 16)}>
          {url}
        </code>
        <CopyButton text={url} label="Copy invite link" />
      </div>
      <p class="muted small">
        The link is shown only now. If it gets lost, invite the same address again: the new link replaces it.
      </p>
    </div>
  );
}
