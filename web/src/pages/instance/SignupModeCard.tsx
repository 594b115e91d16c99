import type { SignupMode } from '@svcenv/contract';
import { updateInstanceSettings } from '../../api/admin.js';
import { useAction, useToast } from '../../toast.js';

const MODES: { mode: SignupMode; label: string; note: string }[] = [
  { mode: 'open', label: 'Open', note: 'Anyone who can reach this server may create an account.' },
  {
    mode: 'invite',
    label: 'Invite only',
    note: 'Only an email address with a pending invite to a workspace may create an account.',
  },
  { mode: 'closed', label: 'Closed', note: 'Nobody may create an account; existing accounts sign in as before.' },
];

/** D69: who may sign up on this instance; saved as soon as it is chosen. */
export function SignupModeCard({ mode, onSaved }: { mode: SignupMode; onSaved: (s: { signup: SignupMode }) => void }) {
  const act = useAction();
  const toast = useToast();
  return (
    <fieldset class="card signup-mode" data-testid="signup-mode">
      <legend class="card-title">Sign-up</legend>
      {MODES.map((m) => (
        <label key={m.mode} class="radio-row">
          <input
            type="radio"
            name="signup"
            value={m.mode}
            checked={m.mode === mode}
            onChange={() =>
              act(async () => {
                onSaved(await updateInstanceSettings(m.mode));
                toast(`Sign-up is now ${m.label.toLowerCase()}`);
              })
            }
          />
          <span>
            <strong>{m.label}</strong>
            <span class="muted small"> · {m.note}</span>
          </span>
        </label>
      ))}
    </fieldset>
  );
}
