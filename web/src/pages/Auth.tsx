import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, getToken, setToken } from '../api.js';
import { navigate } from '../router.js';
import type { SessionUser } from '../types.js';
import { Button, ErrorBanner, Field, FormError, Link, Spinner } from '../ui.js';

type LoginResult = { token: string; user: SessionUser } | { mfaRequired: true; mfaToken: string };

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

/** Login, then the two-factor step when the account has it (spec: mfaRequired → verify-mfa). */
export function LoginForm({ next = '/projects' }: { next?: string }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [mfaToken, setMfaToken] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();

  if (mfaToken) {
    return (
      <form
        class="stack"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(undefined);
          try {
            const res = await api.post<{ token: string }>('/auth/verify-mfa', { mfaToken, code }, { auth: false });
            setToken(res.token);
            navigate(next, true);
          } catch (err) {
            setError(err);
            setBusy(false);
          }
        }}
      >
        <p class="muted">Enter the 6-digit code from your authenticator app, or one of your backup codes.</p>
        <Field label="Authentication code" name="code" error={error}>
          <input
            class="input input-code"
            name="code"
            inputMode="numeric"
            autocomplete="one-time-code"
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
            autofocus
            required
          />
        </Field>
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
  return (
    <form
      class="stack"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          const res = await api.post<LoginResult>('/auth/login', { email, password }, { auth: false });
          if ('mfaRequired' in res) {
            setMfaToken(res.mfaToken);
            setBusy(false);
          } else {
            setToken(res.token);
            navigate(next, true);
          }
        } catch (err) {
          setError(err);
          setBusy(false);
        }
      }}
    >
      <Field label="Email" name="email" error={error}>
        <input
          class="input"
          type="email"
          name="email"
          autocomplete="username"
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
          required
          autofocus
        />
      </Field>
      <Field label="Password" name="password" error={error}>
        <input
          class="input"
          type="password"
          name="password"
          autocomplete="current-password"
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
          required
        />
      </Field>
      <FormError error={error} fields={['email', 'password']} />
      <Button type="submit" variant="primary" busy={busy}>
        Log in
      </Button>
    </form>
  );
}

export function SignupForm({ next = '/projects' }: { next?: string }) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <form
      class="stack"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          const res = await api.post<{ token: string }>('/auth/signup', { name, email, password }, { auth: false });
          setToken(res.token);
          navigate(next, true);
        } catch (err) {
          setError(err);
          setBusy(false);
        }
      }}
    >
      <Field label="Your name" name="name" error={error}>
        <input
          class="input"
          name="name"
          autocomplete="name"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
          required
          autofocus
        />
      </Field>
      <Field label="Work email" name="email" error={error}>
        <input
          class="input"
          type="email"
          name="email"
          autocomplete="email"
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
          required
        />
      </Field>
      <Field label="Password" name="password" error={error} hint="8 to 128 characters.">
        <input
          class="input"
          type="password"
          name="password"
          autocomplete="new-password"
          minLength={8}
          maxLength={128}
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
          required
        />
      </Field>
      <FormError error={error} fields={['name', 'email', 'password']} />
      <Button type="submit" variant="primary" busy={busy}>
        Create account
      </Button>
    </form>
  );
}

export function LoginPage() {
  return (
    <AuthCard title="Welcome back" subtitle="Log in to manage your configuration and secrets.">
      <LoginForm />
      <p class="auth-alt">
        New to svcenv? <Link to="/signup">Create an account</Link>
      </p>
    </AuthCard>
  );
}

export function SignupPage() {
  return (
    <AuthCard title="Create your account" subtitle="You get a workspace of your own; invite your team later.">
      <SignupForm />
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
    api
      .post('/auth/verify-email', { token }, { auth: false })
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

/**
 * `/invite?token=...` from the invite email (D17): the invitee logs in or signs up with the invited
 * address, then accepts; the new JWT is scoped to the workspace they joined.
 */
export function InvitePage({ token }: { token: string | null }) {
  const signedIn = !!getToken();
  const [mode, setMode] = useState<'signup' | 'login'>('signup');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const here = `/invite?token=${encodeURIComponent(token ?? '')}`;
  if (!token) {
    return (
      <AuthCard title="Join a workspace">
        <ErrorBanner error={new Error('This invite link has no token. Open the link from the email again.')} />
      </AuthCard>
    );
  }
  if (!signedIn) {
    return (
      <AuthCard
        title="You're invited"
        subtitle="Sign up (or log in) with the email address the invite was sent to, then join the workspace."
      >
        <div class="seg" role="tablist">
          <button type="button" role="tab" aria-selected={mode === 'signup'} onClick={() => setMode('signup')}>
            Sign up
          </button>
          <button type="button" role="tab" aria-selected={mode === 'login'} onClick={() => setMode('login')}>
            Log in
          </button>
        </div>
        {mode === 'signup' ? <SignupForm next={here} /> : <LoginForm next={here} />}
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Join the workspace" subtitle="Accept the invitation to see the projects you are given access to.">
      <div class="stack">
        <FormError error={error} />
        <Button
          variant="primary"
          busy={busy}
          onClick={async () => {
            setBusy(true);
            setError(undefined);
            try {
              const res = await api.post<{ token: string; workspaceName: string }>('/auth/accept-invite', { token });
              setToken(res.token);
              navigate('/projects', true);
            } catch (err) {
              setError(err);
              setBusy(false);
            }
          }}
        >
          Accept invitation
        </Button>
        <Button
          variant="ghost"
          onClick={() => {
            setToken(null);
          }}
        >
          Use a different account
        </Button>
      </div>
    </AuthCard>
  );
}
