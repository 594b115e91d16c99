import { parseCidrList } from '../lib/cidrs.js';
import { Field } from '../ui.js';

/**
 * D62: "Allowed from", the addresses and ranges a token or an identity may be used from. The text is checked
 * as it is typed by the server's rule; the API's own `trustedCidrs` error shows here too.
 */
export function CidrField({ value, onValue, error }: { value: string; onValue: (v: string) => void; error: unknown }) {
  const parsed = parseCidrList(value);
  return (
    <Field
      label="Allowed from (optional)"
      name="trustedCidrs"
      error={error}
      hint={
        parsed.error ? (
          <span class="field-error" data-testid="cidr-error">
            {parsed.error}
          </span>
        ) : (
          'Addresses or CIDR ranges, separated by commas or new lines, up to 20. Empty: anywhere.'
        )
      }
    >
      <textarea
        class="input"
        name="trustedCidrs"
        rows={2}
        placeholder="203.0.113.0/24, 2001:db8::/32"
        value={value}
        aria-invalid={parsed.error ? true : undefined}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
    </Field>
  );
}
