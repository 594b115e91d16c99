import './styles.css';
import type { SessionUser } from '@svcenv/contract';
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { getSession } from './api/auth.js';
import { getToken, onTokenChange, restoreSession } from './api.js';
import { UnresolvedHost } from './components/Unresolved.js';
import { afterLogin } from './lib/next.js';
import { AuditPage } from './pages/Audit.js';
import { LoginPage, SignupPage, VerifyEmailPage } from './pages/Auth.js';
import { InboxPage } from './pages/access/InboxPage.js';
import { CliPage } from './pages/Cli.js';
import { InvitePage } from './pages/Invite.js';
import { IdentitiesPage } from './pages/identities/IdentitiesPage.js';
import { InstancePage } from './pages/instance/InstancePage.js';
import { ProjectPage } from './pages/Project.js';
import { ProjectsPage } from './pages/Projects.js';
import { ForgotPasswordPage, ResetPasswordPage } from './pages/ResetPassword.js';
import { takeSsoNext } from './pages/SsoLogin.js';
import { SettingsPage } from './pages/settings/SettingsPage.js';
import { TeamPage } from './pages/team/TeamPage.js';
import { TokensPage } from './pages/tokens/TokensPage.js';
import { WebhooksPage } from './pages/webhooks/WebhooksPage.js';
import { match, navigate, useLocation } from './router.js';
import { SessionCtx, toLogin } from './session.js';
import { Shell } from './shell.js';
import { ToastHost } from './toast.js';
import { ErrorBanner, Spinner } from './ui.js';

/** Replaces the URL after the first render, once the router listens. */
function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, true), [to]);
  return null;
}

/**
 * `/` is where a single sign-on lands (D63), in a fresh page load: the page asked for before it, kept by the
 * login page, is read once here.
 */
const ssoNext = location.pathname === '/' ? takeSsoNext() : null;

function App() {
  const [token, setTok] = useState(getToken());
  // Another tab's session (the cookie) is looked for once, before anything is shown.
  const [restoring, setRestoring] = useState(true);
  useEffect(() => {
    restoreSession().finally(() => setRestoring(false));
  }, []);
  const [user, setUser] = useState<SessionUser | null>(null);
  const [error, setError] = useState<unknown>();
  const { path, query } = useLocation();

  useEffect(() => onTokenChange(() => setTok(getToken())), []);

  const refresh = useCallback(async () => {
    const res = await getSession();
    setUser(res.user);
  }, []);

  // After a verified email the signed-in session is re-read, so the banner goes away.
  const onVerified = useCallback(() => {
    if (getToken()) refresh().catch(() => undefined);
  }, [refresh]);

  useEffect(() => {
    setUser(null);
    setError(undefined);
    if (token) refresh().catch(setError);
  }, [token, refresh]);

  // Pages reachable signed in or not.
  if (path === '/verify-email')
    return <VerifyEmailPage token={query.get('token')} signedIn={!!token} onVerified={onVerified} />;
  if (path === '/invite') return <InvitePage token={query.get('token')} />;
  if (path === '/reset-password') return <ResetPasswordPage token={query.get('token')} />;

  if (!token && restoring) {
    return (
      <div class="center-page">
        <Spinner />
      </div>
    );
  }
  if (!token) {
    if (path === '/signup') return <SignupPage />;
    if (path === '/forgot-password') return <ForgotPasswordPage />;
    if (path !== '/login') {
      // A deep link survives the login (ADR 0014).
      const here = `${path}${query.toString() ? `?${query.toString()}` : ''}`;
      return <Redirect to={path === '/' ? '/login' : `/login?next=${encodeURIComponent(here)}`} />;
    }
    return <LoginPage notice={query.get('reset')} next={query.get('next')} ssoError={query.get('sso_error')} />;
  }
  if (error) {
    return (
      <div class="center-page">
        <ErrorBanner error={error} onRetry={() => refresh().catch(setError)} />
      </div>
    );
  }
  if (!user) {
    return (
      <div class="center-page">
        <Spinner />
      </div>
    );
  }
  if (path === '/' || path === '/login' || path === '/signup' || path === '/forgot-password') {
    const to =
      path === '/login' ? afterLogin(query.get('next')) : path === '/' ? (ssoNext ?? '/projects') : '/projects';
    return <Redirect to={to} />;
  }
  let page = null;
  const m = match('/projects/:id', path);
  if (path === '/projects') page = <ProjectsPage />;
  else if (m)
    page = <ProjectPage id={m.id!} tab={query.get('tab')} env={query.get('env')} request={query.get('request')} />;
  else if (path === '/access-requests') page = <InboxPage highlight={query.get('request')} />;
  else if (path === '/tokens') page = <TokensPage />;
  else if (path === '/cli') page = <CliPage />;
  else if (path === '/identities') page = <IdentitiesPage />;
  else if (path === '/team') page = <TeamPage />;
  else if (path === '/webhooks') page = <WebhooksPage />;
  else if (path === '/audit') page = <AuditPage />;
  else if (path === '/settings') page = <SettingsPage />;
  else if (path === '/instance') page = <InstancePage />;
  else page = <ErrorBanner error={new Error(`Nothing here: ${path}`)} />;

  return (
    <SessionCtx.Provider value={{ user, refresh }}>
      <Shell path={path} onLogout={toLogin}>
        {page}
      </Shell>
    </SessionCtx.Provider>
  );
}

render(
  <ToastHost>
    <UnresolvedHost>
      <App />
    </UnresolvedHost>
  </ToastHost>,
  document.getElementById('app')!,
);
