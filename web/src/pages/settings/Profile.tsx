import { updateMe } from '../../api/account.js';
import { useEmailDelivery } from '../../hooks.js';
import { useSession } from '../../session.js';
import { Field, Pill } from '../../ui.js';
import { NameForm } from './NameForm.js';

/** The user's name, and their email with whether it is verified (and why not, without email: ADR 0021). */
export function Profile() {
  const { user } = useSession();
  const emailDelivery = useEmailDelivery();
  return (
    <NameForm
      title="Profile"
      initial={user.name}
      save={(name) => updateMe({ name })}
      saved="Profile saved"
      submitLabel="Save profile"
    >
      <Field label="Email">
        <div class="static-value">
          {user.email}{' '}
          {user.emailVerifiedAt ? (
            <Pill tone="ok">verified</Pill>
          ) : emailDelivery === false ? (
            <>
              <Pill tone="neutral">not verified</Pill>{' '}
              <span class="muted small">this server sends no email; nothing depends on it</span>
            </>
          ) : (
            <Pill tone="warn">not verified</Pill>
          )}
        </div>
      </Field>
    </NameForm>
  );
}
