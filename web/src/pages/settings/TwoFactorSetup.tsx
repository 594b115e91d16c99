import { useEffect, useState } from 'preact/hooks';
import { enableMfa } from '../../api/account.js';
import { CodeField } from '../../components/CodeField.js';
import type { MfaSetup } from '../../types.js';
import { Button, FormError, Spinner } from '../../ui.js';
import { SettingsCard } from './SettingsCard.js';
import { useCodeStep } from './useCodeStep.js';

/** Two-factor being set up: the QR code and key for the app, then the first code turns it on. */
export function TwoFactorSetup({
  setup,
  onCancel,
  onEnabled,
}: {
  setup: MfaSetup;
  onCancel: () => void;
  onEnabled: (backupCodes: string[]) => void;
}) {
  const { code, setCode, busy, error, setError, withCode } = useCodeStep();
  const [qr, setQr] = useState<string | null>(null);
  useEffect(() => {
    // The QR library is loaded only here, so it is not in the main bundle.
    import('qrcode')
      .then((QR) => QR.toDataURL(setup.otpauthUrl, { margin: 1, width: 200, errorCorrectionLevel: 'M' }))
      .then(setQr)
      .catch(setError);
  }, [setup]);
  return (
    <SettingsCard title="Two-factor authentication">
      <form class="stack" onSubmit={withCode(async () => onEnabled((await enableMfa(code)).backupCodes))}>
        <p>
          Scan this code with an authenticator app (1Password, Google Authenticator, …), then enter the 6-digit code.
        </p>
        <div class="qr-row">
          {qr ? (
            <img class="qr" src={qr} alt="QR code for your authenticator app" width={200} height={200} />
          ) : (
            <Spinner />
          )}
          <div class="stack">
            <span class="muted small">Or enter this key by hand:</span>
            <code class="secret-key" data-testid="mfa-secret">
              {setup.secret}
            </code>
          </div>
        </div>
        <CodeField label="Code from the app" value={code} onValue={setCode} error={error} />
        <FormError error={error} fields={['code']} />
        <p class="muted small">Turning it on logs you out everywhere; log in again with a code.</p>
        <div class="row-end">
          <Button onClick={onCancel}>Cancel</Button>
          <Button type="submit" variant="primary" busy={busy}>
            Turn on
          </Button>
        </div>
      </form>
    </SettingsCard>
  );
}
