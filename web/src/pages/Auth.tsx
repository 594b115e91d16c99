import type { SignupMode } from '@svcenv/contract';
import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import { fetchAuthOptions, login, signup, verifyEmail, verifyMfa } from '../api/auth.js';
import { ApiError, setToken } from '../api.js';
import { CodeField } from '../components/CodeField.js';
import { EmailField, NameField, NEW_PASSWORD, PasswordField } from '../components/TextField.js';
import { useSubmit } from '../hooks.js';
import { afterLogin } from '../lib/next.js';
import { navigate } from '../router.js';
import { Button, ErrorBanner, FormError, Link, Spinner } from '../ui.js';
import { SsoErrorNotice, SsoForm, SsoRequired } from './SsoLogin.js';

export function AuthCard({
  title,
  subtitle,
  children,
}: {
  title: string;
  subtitle?: string;
  children: ComponentChildren;
}) {
  return (
    <div class="auth-wrap">
      <div class="auth-card">
        <div class="brand brand-lg">
          <span class="brand-mark" aria-hidden="true" />
          svcenv
        </div>
        <h1>{title}</h1>
        {subtitle && <p class="muted">{subtitle}</p>}
        {children}
      </div>
    </div>
  );
}

/**
 * Login, then the two-factor step when the account has it (spec: mfaRequired → verify-mfa). `email` and
 * `onEmail`: the page's address, shared with its SSO way; without them the form keeps its own.
 */
export function LoginForm({
  next = '/projects',
  email: invited = '',
  onEmail,
  onSsoRequired,
}: {
  next?: string;
  email?: string;
  onEmail?: (email: string) => void;
  /** Told whether the last attempt was refused with SSO_REQUIRED (the page then offers SSO once, here). */
  onSsoRequired?: (required: boolean) => void;
}) {
  const [ownEmail, setOwnEmail] = useState(invited);
  const email = onEmail ? invited : ownEmail;
  const setEmail = onEmail ?? setOwnEmail;
  const [password, setPassword] = useState('');
  const [mfaToken, setMfaToken] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const { busy, error, setError, submit } = useSubmit();
  const signedIn = (token: string) => {
    setToken(token);
    navigate(next, true);
  };

  if (mfaToken) {
    return (
      <form class="stack" onSubmit={submit(async () => signedIn((await verifyMfa({ mfaToken, code })).token))}>
        <p class="muted">Enter the 6-digit code from your authenticator app, or one of your backup codes.</p>
        <CodeField value={code} onValue={setCode} error={error} />
        <FormError error={error} fields={['code']} />
        <Button type="submit" variant="primary" busy={busy}>
          Verify
        </Button>
        <button
          type="button"
          class="linklike"
          onClick={() => {
            setMfaToken(null);
            setCode('');
            setError(undefined);
          }}
        >
          Use a different account
        </button>
      </form>
    );
  }
  // D63 enforce: an address whose workspace signs in by single sign-on gets the explanation and that way in.
  const ssoRequired = error instanceof ApiError && error.code === 'SSO_REQUIRED';
  const fieldError = ssoRequired ? undefined : error;
  // Before the browser paints: with a plain effect the page showed the general "Sign in with SSO" beside this
  // form's own offer for a frame, and anything reading the page in between saw both.
  useLayoutEffect(() => onSsoRequired?.(ssoRequired), [ssoRequired, onSsoRequired]);
  return (
    <form
      class="stack"
      onSubmit={submit(async () => {
        const res = await login({ email, password });
        if ('mfaRequired' in res) setMfaToken(res.mfaToken);
        else signedIn(res.token);
      })}
    >
      <EmailField value={email} onValue={setEmail} error={fieldError} autocomplete="username" autofocus />
      <PasswordField
        label="Password"
        name="password"
        autocomplete="current-password"
        value={password}
        onValue={setPassword}
        error={fieldError}
      />
      {ssoRequired ? (
        <SsoRequired email={email} next={next} />
      ) : (
        <FormError error={error} fields={['email', 'password']} />
      )}
      <Button type="submit" variant={ssoRequired ? 'secondary' : 'primary'} busy={busy}>
        Log in
      </Button>
    </form>
  );
}

/** `email`: pre-filled from an invite (the invited address must be the account's, D17). */
export function SignupForm({ next = '/projects', email: invited = '' }: { next?: string; email?: string }) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState(invited);
  const [password, setPassword] = useState('');
  const { busy, error, submit } = useSubmit();
  // D63 enforce: such an address gets its account from its first single sign-on, not from this form.
  const ssoRequired = error instanceof ApiError && error.code === 'SSO_REQUIRED';
  const fieldError = ssoRequired ? undefined : error;
  return (
    <form
      class="stack"
      onSubmit={submit(async () => {
        const res = await signup({ name, email, password });
        setToken(res.token);
        navigate(next, true);
      })}
    >
      <NameField
        label="Your name"
        autocomplete="name"
        value={name}
        onValue={setName}
        error={fieldError}
        required
        autofocus
      />
      <EmailField label="Work email" autocomplete="email" value={email} onValue={setEmail} error={fieldError} />
      <PasswordField
        label="Password"
        name="password"
        {...NEW_PASSWORD}
        value={password}
        onValue={setPassword}
        error={fieldError}
      />
      {ssoRequired ? (
        <SsoRequired email={email} next={next} />
      ) : (
        <FormError error={error} fields={['name', 'email', 'password']} />
      )}
      <Button type="submit" variant="primary" busy={busy}>
        Create account
      </Button>
    </form>
  );
}

/**
 * `reset=done`: arrived from a finished password reset (pages/ResetPassword.tsx, D54). `ssoError`: a single
 * sign-on came back refused (D63), shown in words by its reason.
 */
export function LoginPage({
  notice,
  next,
  ssoError,
}: {
  notice?: string | null;
  next?: string | null;
  ssoError?: string | null;
}) {
  const mode = useSignupMode();
  const [way, setWay] = useState<'password' | 'sso'>('password');
  const [email, setEmail] = useState('');
  // While the password form shows its own SSO offer (SSO_REQUIRED), the general one below would repeat it.
  const [ssoRequired, setSsoRequired] = useState(false);
  const after = afterLogin(next ?? null);
  return (
    <AuthCard title="Welcome back" subtitle="Log in to manage your configuration and secrets.">
      {notice === 'done' && (
        <div class="alert alert-ok" role="status">
          Your password has been changed and every session signed out. Log in with the new password.
        </div>
      )}
      <SsoErrorNotice reason={ssoError ?? null} />
      {way === 'sso' ? (
        <SsoForm email={email} onEmail={setEmail} next={after} onPassword={() => setWay('password')} />
      ) : (
        <>
          <LoginForm next={after} email={email} onEmail={setEmail} onSsoRequired={setSsoRequired} />
          {!ssoRequired && (
            <>
              <div class="auth-or" aria-hidden="true">
                <span>or</span>
              </div>
              <Button onClick={() => setWay('sso')}>Sign in with SSO</Button>
            </>
          )}
        </>
      )}
      <p class="auth-alt">
        <Link to="/forgot-password">Forgot password?</Link>
      </p>
      {mode === 'closed' ? (
        <p class="auth-alt muted" data-testid="signup-notice">
          {SIGNUP_NOTICE.closed}
        </p>
      ) : mode === 'invite' ? (
        <p class="auth-alt muted" data-testid="signup-notice">
          New to svcenv? Sign-up here is by invitation: open the link in your invite.
        </p>
      ) : (
        <p class="auth-alt">
          New to svcenv? <Link to="/signup">Create an account</Link>
        </p>
      )}
    </AuthCard>
  );
}

/** D69: the instance's signup mode, once; null until known (or when the server does not say). */
function useSignupMode(): SignupMode | null {
  const [mode, setMode] = useState<SignupMode | null>(null);
  useEffect(() => {
    fetchAuthOptions()
      .then((r) => setMode(r.signup))
      .catch(() => undefined);
  }, []);
  return mode;
}

const SIGNUP_NOTICE: Record<Exclude<SignupMode, 'open'>, string> = {
  invite:
    'Sign-up on this server is by invitation only: use the link in the invite you were sent, or the email address it went to.',
  closed: 'Sign-up is closed on this server. Ask its administrator for an account.',
};

export function SignupPage() {
  const mode = useSignupMode();
  return (
    <AuthCard title="Create your account" subtitle="You get a workspace of your own; invite your team later.">
      {mode && mode !== 'open' && (
        <div class="alert alert-info" role="status" data-testid="signup-notice">
          {SIGNUP_NOTICE[mode]}
        </div>
      )}
      {mode !== 'closed' && <SignupForm />}
      <p class="auth-alt">
        Already have an account? <Link to="/login">Log in</Link>
      </p>
    </AuthCard>
  );
}

/** `/verify-email?token=...` from the signup email (D11); works signed in or not. */
export function VerifyEmailPage({
  token,
  signedIn,
  onVerified,
}: {
  token: string | null;
  signedIn: boolean;
  onVerified: () => void;
}) {
  const [state, setState] = useState<{ done?: boolean; error?: unknown }>({});
  useEffect(() => {
    if (!token) return;
    verifyEmail(token)
      .then(() => {
        setState({ done: true });
        onVerified();
      })
      .catch((error) => setState({ error }));
  }, [token, onVerified]);
  return (
    <AuthCard title="Verify your email">
      {!token ? (
        <ErrorBanner error={new Error('This link has no token. Open the link from the email again.')} />
      ) : state.error ? (
        <ErrorBanner error={state.error} />
      ) : state.done ? (
        <div class="stack">
          <div class="alert alert-ok" role="status">
            Your email address is verified.
          </div>
          <Button variant="primary" onClick={() => navigate(signedIn ? '/projects' : '/login', true)}>
            {signedIn ? 'Go to your projects' : 'Log in'}
          </Button>
        </div>
      ) : (
        <Spinner label="Verifying…" />
      )}
    </AuthCard>
  );
}
