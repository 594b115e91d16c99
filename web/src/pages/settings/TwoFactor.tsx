import { useState } from 'preact/hooks';
import { setupMfa } from '../../api/account.js';
import { ApiError } from '../../api.js';
import { useSubmit } from '../../hooks.js';
import type { MfaSetup } from '../../types.js';
import { Button, FormError } from '../../ui.js';
import { BackupCodes, type ShownCodes } from './BackupCodes.js';
import { SettingsCard } from './SettingsCard.js';
import { TwoFactorOn } from './TwoFactorOn.js';
import { TwoFactorSetup } from './TwoFactorSetup.js';

/**
 * D12/D13: setup → QR + secret → confirm with a code → backup codes shown once. Enabling ends every
 * earlier session (D9), this one included, so the user logs in again with the new second factor. The
 * session does not say whether two-factor is on: a setup answered 409 means it is, and then the card
 * offers new backup codes and turning it off (both need a current code).
 */
export function TwoFactor() {
  const [setup, setSetup] = useState<MfaSetup | null>(null);
  const [enabled, setEnabled] = useState(false);
  const [codes, setCodes] = useState<ShownCodes | null>(null);
  const { busy, error, submit } = useSubmit();

  if (codes) return <BackupCodes codes={codes} onDone={() => setCodes(null)} />;
  if (setup) {
    return (
      <TwoFactorSetup
        setup={setup}
        onCancel={() => setSetup(null)}
        onEnabled={(list) => {
          setCodes({ list, relogin: true });
          setSetup(null);
        }}
      />
    );
  }
  if (enabled) return <TwoFactorOn onCodes={(list) => setCodes({ list, relogin: false })} />;
  return (
    <SettingsCard title="Two-factor authentication">
      <div class="stack">
        <p class="muted">Ask for a code from an authenticator app at every login.</p>
        <FormError error={error} />
        <div>
          <Button
            busy={busy}
            onClick={submit(async () => {
              try {
                setSetup(await setupMfa());
              } catch (err) {
                // 409: it is on already (the session does not say), so the card offers what fits that.
                if (err instanceof ApiError && err.status === 409) setEnabled(true);
                else if (err instanceof ApiError && err.status === 404)
                  throw new Error('Two-factor authentication is not available on this server yet.');
                else throw err;
              }
            })}
          >
            Set up two-factor
          </Button>
        </div>
      </div>
    </SettingsCard>
  );
}
