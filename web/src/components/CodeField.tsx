import { Field } from '../ui.js';

/**
 * The field for a two-factor code (from the authenticator app, or a backup code), the same wherever one is
 * asked for: logging in, resetting a password, and setting two-factor up or off in Settings.
 */
export function CodeField({
  label = 'Authentication code',
  value,
  onValue,
  error,
}: {
  label?: string;
  value: string;
  onValue: (code: string) => void;
  /** The form's error: shown here when it names the field `code`. */
  error: unknown;
}) {
  return (
    <Field label={label} name="code" error={error}>
      <input
        class="input input-code"
        name="code"
        inputMode="numeric"
        autocomplete="one-time-code"
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
        autofocus
        required
      />
    </Field>
  );
}
