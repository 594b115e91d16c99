import { updateMe } from '../../api/account.js';
import { useSession } from '../../session.js';
import { Field, Pill } from '../../ui.js';
import { NameForm } from './NameForm.js';

/** The user's name, and their email with whether it is verified. */
export function Profile() {
  const { user } = useSession();
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
          {user.email} {user.emailVerifiedAt ? <Pill tone="ok">verified</Pill> : <Pill tone="warn">not verified</Pill>}
        </div>
      </Field>
    </NameForm>
  );
}
