import { useState } from 'preact/hooks';
import { changePassword } from '../../api/account.js';
import { PasswordField } from '../../components/TextField.js';
import { useSubmit } from '../../hooks.js';
import { toLogin } from '../../session.js';
import { useToast } from '../../toast.js';
import { Button, FormError } from '../../ui.js';
import { SettingsCard } from './SettingsCard.js';

export function Password() {
  const toast = useToast();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const { busy, error, submit } = useSubmit();
  return (
    <SettingsCard title="Password">
      <form
        class="stack"
        onSubmit={submit(async () => {
          await changePassword({ currentPassword: current, newPassword: next });
          // D9: a password change ends every earlier session, this one included.
          toast('Password changed. Log in with the new password.');
          toLogin();
        })}
      >
        <PasswordField
          label="Current password"
          name="currentPassword"
          autocomplete="current-password"
          value={current}
          onValue={setCurrent}
          error={error}
        />
        <PasswordField
          label="New password"
          name="newPassword"
          autocomplete="new-password"
          minLength={8}
          hint="8 to 128 characters. You will be logged out."
          value={next}
          onValue={setNext}
          error={error}
        />
        <FormError error={error} fields={['currentPassword', 'newPassword']} />
        <div>
          <Button type="submit" busy={busy}>
            Change password
          </Button>
        </div>
      </form>
    </SettingsCard>
  );
}
