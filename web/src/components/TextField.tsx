import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { Field } from '../ui.js';

interface TextFieldProps {
  label: string;
  /** The input's name: the body field it fills, and the API error field shown beneath it. */
  name: string;
  value: string;
  onValue: (value: string) => void;
  /** The form's error (useSubmit): shown here when it names `name`. */
  error: unknown;
  hint?: ComponentChildren;
  /** The <input>'s own attributes. */
  class?: string;
  type?: 'text' | 'email' | 'password' | 'url';
  autocomplete?: string;
  required?: boolean;
  autofocus?: boolean;
  disabled?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

/** A labelled text input of a form, with its hint or the API error that names it. */
export function TextField({
  label,
  name,
  value,
  onValue,
  error,
  hint,
  class: cls = 'input',
  ...input
}: TextFieldProps) {
  return (
    <Field label={label} name={name} error={error} hint={hint}>
      <input
        // preact types <input> as one variant per `type`; these attributes suit each of the four.
        {...(input as InputHTMLAttributes<HTMLInputElement>)}
        class={cls}
        name={name}
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
    </Field>
  );
}

type Named = Omit<TextFieldProps, 'name' | 'label'> & { label?: string };

/** The `name` of what a form creates or edits (a token, a webhook, an environment, a profile, …). */
export function NameField(props: Named) {
  return <TextField label="Name" {...props} name="name" />;
}

/** An account's email: logging in, signing up, a reset link, an invite. */
export function EmailField(props: Named) {
  return <TextField label="Email" {...props} type="email" name="email" required />;
}

/** A password; `autocomplete` tells a password manager whether to fill the current one or offer a new one. */
export function PasswordField(
  props: Omit<TextFieldProps, 'type' | 'autocomplete'> & { autocomplete: 'current-password' | 'new-password' },
) {
  return <TextField {...props} type="password" required />;
}

/** A new account password where it is chosen (signing up, a reset): the server's 8 to 128 characters. */
export const NEW_PASSWORD = {
  autocomplete: 'new-password',
  minLength: 8,
  maxLength: 128,
  hint: '8 to 128 characters.',
} as const;
