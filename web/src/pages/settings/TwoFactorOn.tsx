import { disableMfa, regenerateBackupCodes } from '../../api/account.js';
import { CodeField } from '../../components/CodeField.js';
import { toLogin } from '../../session.js';
import { useToast } from '../../toast.js';
import { Button, FormError, Pill } from '../../ui.js';
import { SettingsCard } from './SettingsCard.js';
import { useCodeStep } from './useCodeStep.js';

/** Two-factor is on: a current code (or a backup code) makes new backup codes or turns it off. */
export function TwoFactorOn({ onCodes }: { onCodes: (backupCodes: string[]) => void }) {
  const { code, setCode, busy, error, withCode } = useCodeStep();
  const toast = useToast();
  return (
    <SettingsCard title="Two-factor authentication">
      <form
        class="stack"
        onSubmit={(e) => {
          const action = ((e as SubmitEvent).submitter as HTMLButtonElement | null)?.value;
          return withCode(async () => {
            if (action === 'disable') {
              await disableMfa(code);
              toast('Two-factor authentication is off. Log in again.');
              toLogin();
            } else {
              onCodes((await regenerateBackupCodes(code)).backupCodes);
            }
          })(e);
        }}
      >
        <div>
          <Pill tone="ok">on</Pill> <span class="muted">A code is asked for at every login.</span>
        </div>
        <CodeField label="Current code or a backup code" value={code} onValue={setCode} error={error} />
        <FormError error={error} fields={['code']} />
        <div class="row-end">
          <Button type="submit" value="codes" busy={busy}>
            New backup codes
          </Button>
          <Button type="submit" value="disable" variant="danger" busy={busy}>
            Turn off
          </Button>
        </div>
      </form>
    </SettingsCard>
  );
}
