import { toLogin } from '../../session.js';
import { Button, CopyButton } from '../../ui.js';
import { SettingsCard } from './SettingsCard.js';

/** Backup codes just made; `relogin` when they came with turning two-factor on, which ended this session. */
export interface ShownCodes {
  list: string[];
  relogin: boolean;
}

/** The backup codes, shown once. */
export function BackupCodes({ codes, onDone }: { codes: ShownCodes; onDone: () => void }) {
  return (
    <SettingsCard title="Two-factor authentication">
      <div class="stack">
        <div class="alert alert-ok" role="status">
          {codes.relogin
            ? 'Two-factor authentication is on.'
            : 'New backup codes generated; the old ones no longer work.'}
        </div>
        <p>
          Save these backup codes somewhere safe. Each works once if you lose your device; they are not shown again.
        </p>
        <ul class="backup-codes" data-testid="backup-codes">
          {codes.list.map((c) => (
            <li key={c}>
              <code>{c}</code>
            </li>
          ))}
        </ul>
        <div class="row-end">
          <CopyButton text={codes.list.join('\n')} label="Copy all" />
          <Button
            variant="primary"
            onClick={() => {
              if (!codes.relogin) return onDone();
              // D9: enabling two-factor ended this session; log in again with the authenticator.
              toLogin();
            }}
          >
            {codes.relogin ? 'Done, log in again' : 'Done'}
          </Button>
        </div>
      </div>
    </SettingsCard>
  );
}
