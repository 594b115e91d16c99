import { useState } from 'preact/hooks';
import { forgotPassword, resetPassword } from '../api/auth.js';
import { ApiError, getToken, setToken } from '../api.js';
import { CodeField } from '../components/CodeField.js';
import { EmailField, NEW_PASSWORD, PasswordField } from '../components/TextField.js';
import { useEmailDelivery, useSubmit } from '../hooks.js';
import { navigate } from '../router.js';
import { Button, ErrorBanner, FormError, Link } from '../ui.js';
import { AuthCard } from './Auth.js';

/** Where a finished reset lands: the login page, which shows a notice for it. */
export const RESET_DONE = '/login?reset=done';

/**
 * `/forgot-password` (D54). The answer is the same whether or not the address has an account, and so is
 * what the page says afterwards.
 */
export function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const { busy, error, submit } = useSubmit();
  const emailDelivery = useEmailDelivery();
  // ADR 0021: without email no reset link can reach anyone; the instance administrator can make one.
  if (emailDelivery === false) {
    return (
      <AuthCard title="Forgot your password?">
        <div class="alert alert-info" role="status" data-testid="no-email-reset">
          This server does not send email, so it cannot email you a reset link.
        </div>
        <p>
          Ask your instance administrator for a reset link: they can make one for your account. It works once, for one
          hour, and lets you choose a new password (and signs you out everywhere).
        </p>
        <p class="auth-alt">
          Remembered it? <Link to="/login">Log in</Link>
        </p>
      </AuthCard>
    );
  }
  if (sentTo) {
    return (
      <AuthCard title="Check your email">
        <div class="alert alert-ok" role="status">
          If an account exists for {sentTo}, we sent it a link to choose a new password. The link works once, for one
          hour.
        </div>
        <p class="muted">
          No email after a few minutes? Check the spam folder, or ask your instance administrator for a reset link.
        </p>
        <p class="auth-alt">
          <Link to="/login">Back to log in</Link>
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Forgot your password?" subtitle="Enter your account's email and we'll send you a reset link.">
      <form
        class="stack"
        onSubmit={submit(async () => {
          await forgotPassword(email);
          setSentTo(email.trim());
        })}
      >
        <EmailField value={email} onValue={setEmail} error={error} autocomplete="username" autofocus />
        <FormError error={error} fields={['email']} />
        <Button type="submit" variant="primary" busy={busy}>
          Send reset link
        </Button>
      </form>
      <p class="auth-alt">
        Remembered it? <Link to="/login">Log in</Link>
      </p>
    </AuthCard>
  );
}

/** The page's own check that both entries match, shown on the second field like a server error would be. */
const mismatch = () => new ApiError(400, 'VALIDATION', 'the two passwords do not match', 'confirm');

/**
 * `/reset-password?token=...` from the email (D54). The page first sends no code; when the server answers
 * 401 with field `code` (two-factor is on) it shows the code field, keeping what was typed (ADR 0011).
 */
export function ResetPasswordPage({ token }: { token: string | null }) {
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [code, setCode] = useState('');
  const [needCode, setNeedCode] = useState(false);
  const { busy, error, setError, submit } = useSubmit();
  if (!token) {
    return (
      <AuthCard title="Choose a new password">
        <ErrorBanner error={new Error('This link has no token. Open the link from the email again.')} />
        <p class="auth-alt">
          <Link to="/forgot-password">Request a new link</Link>
        </p>
      </AuthCard>
    );
  }
  const dead = error instanceof ApiError && error.code === 'NOT_FOUND';
  // The mismatch note goes once either entry is edited, not at the next submit.
  const clearMismatch = () => {
    if (error instanceof ApiError && error.field === 'confirm') setError(undefined);
  };
  const onSubmit = submit(async () => {
    if (password !== confirm) throw mismatch();
    try {
      await resetPassword({ token, newPassword: password, ...(needCode ? { code } : {}) });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401 && e.field === 'code' && !needCode) {
        // Two-factor is on: ask for the code, showing no error, since nothing went wrong yet.
        setNeedCode(true);
        return;
      }
      // A wrong code: shown on the code field.
      if (e instanceof ApiError && e.status === 401) throw new ApiError(401, e.code, e.message, 'code');
      throw e;
    }
    // Every session of the account has ended (D9), this tab's too.
    if (getToken()) setToken(null);
    navigate(RESET_DONE, true);
  });
  return (
    <AuthCard
      title="Choose a new password"
      subtitle="Afterwards every session ends; log in again with the new password."
    >
      {dead ? (
        <div class="stack">
          <ErrorBanner error={error} />
          <p class="muted">Links work once, for one hour, and only the newest one sent works.</p>
          <Button variant="primary" onClick={() => navigate('/forgot-password')}>
            Request a new link
          </Button>
        </div>
      ) : (
        <form class="stack" onSubmit={onSubmit}>
          <PasswordField
            label="New password"
            name="newPassword"
            {...NEW_PASSWORD}
            value={password}
            onValue={(v) => {
              setPassword(v);
              clearMismatch();
            }}
            error={error}
            autofocus
          />
          <PasswordField
            label="Repeat new password"
            name="confirm"
            autocomplete="new-password"
            value={confirm}
            onValue={(v) => {
              setConfirm(v);
              clearMismatch();
            }}
            error={error}
          />
          {needCode && (
            <>
              <div class="alert alert-info" role="status">
                This account uses two-factor authentication. Enter the 6-digit code from your authenticator app, or one
                of your backup codes.
              </div>
              <CodeField value={code} onValue={setCode} error={error} />
            </>
          )}
          <FormError error={error} fields={['newPassword', 'confirm', 'code']} />
          <Button type="submit" variant="primary" busy={busy}>
            Set new password
          </Button>
        </form>
      )}
    </AuthCard>
  );
}
