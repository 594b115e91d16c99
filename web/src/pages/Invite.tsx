import { useState } from 'preact/hooks';
import { acceptInvite, getSession, inviteInfo } from '../api/auth.js';
import { ApiError, getToken, setToken } from '../api.js';
import { useAsync, useSubmit } from '../hooks.js';
import { navigate } from '../router.js';
import { Button, ErrorBanner, FormError, Spinner } from '../ui.js';
import { AuthCard, LoginForm, SignupForm } from './Auth.js';

/**
 * `/invite?token=...` from the invite email or the link an Owner handed over (D17, ADR 0012): it names the
 * workspace and who invited whom, pre-fills the invited address in the sign-up and log-in forms, and says
 * so when the signed-in account is not the invited one, instead of a bare 403 after "Accept".
 */
export function InvitePage({ token }: { token: string | null }) {
  if (!token) {
    return (
      <AuthCard title="Join a workspace">
        <ErrorBanner error={new Error('This invite link has no token. Open the link from the email again.')} />
      </AuthCard>
    );
  }
  return <Invite token={token} />;
}

function Invite({ token }: { token: string }) {
  const signedIn = !!getToken();
  const info = useAsync(() => inviteInfo(token), [token]);
  // Which account is signed in, to tell a mismatch before the accept is refused.
  const session = useAsync(() => (signedIn ? getSession() : Promise.resolve(null)), [signedIn]);
  const [mode, setMode] = useState<'signup' | 'login'>('signup');
  const { busy, error, submit } = useSubmit();
  const here = `/invite?token=${encodeURIComponent(token)}`;

  if (info.error) {
    const dead = info.error instanceof ApiError && info.error.status === 404;
    return (
      <AuthCard title="Join a workspace">
        {dead ? (
          <div class="alert alert-error" role="alert">
            This invite link is no longer valid: it was used, revoked or replaced by a newer one, or it expired (links
            last 7 days). Ask the person who invited you to invite you again.
          </div>
        ) : (
          <ErrorBanner error={info.error} onRetry={info.reload} />
        )}
      </AuthCard>
    );
  }
  if (!info.data || (signedIn && session.data === undefined && !session.error)) {
    return (
      <AuthCard title="Join a workspace">
        <Spinner />
      </AuthCard>
    );
  }
  const { workspaceName, inviterName, email } = info.data;
  const greeting = (
    <p class="invite-greeting" data-testid="invite-greeting">
      {inviterName ? (
        <>
          <strong>{inviterName}</strong> invited <strong>{email}</strong> to the workspace{' '}
          <strong>{workspaceName}</strong>.
        </>
      ) : (
        <>
          <strong>{email}</strong> is invited to the workspace <strong>{workspaceName}</strong>.
        </>
      )}
    </p>
  );

  if (!signedIn) {
    return (
      <AuthCard title={`Join ${workspaceName}`}>
        {greeting}
        <p class="muted small">
          Sign up with {email} (or log in if you already have an account with it), then accept the invite.
        </p>
        <div class="seg" role="tablist">
          <button type="button" role="tab" aria-selected={mode === 'signup'} onClick={() => setMode('signup')}>
            Sign up
          </button>
          <button type="button" role="tab" aria-selected={mode === 'login'} onClick={() => setMode('login')}>
            Log in
          </button>
        </div>
        {mode === 'signup' ? <SignupForm next={here} email={email} /> : <LoginForm next={here} email={email} />}
      </AuthCard>
    );
  }
  const me = session.data?.user;
  const otherAccount = me && me.email.toLowerCase() !== email.toLowerCase();
  return (
    <AuthCard title={`Join ${workspaceName}`}>
      <div class="stack">
        {greeting}
        {otherAccount ? (
          <div class="alert alert-warn" role="alert">
            You are signed in as {me.email}, but this invite is for {email}. Sign in with that address (or sign up with
            it) to accept.
          </div>
        ) : (
          <>
            <FormError error={error} />
            <Button
              variant="primary"
              busy={busy}
              onClick={submit(async () => {
                setToken((await acceptInvite(token)).token);
                navigate('/projects', true);
              })}
            >
              Accept invitation
            </Button>
          </>
        )}
        <Button
          variant={otherAccount ? 'primary' : 'ghost'}
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
