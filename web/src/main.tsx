import './styles.css';
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, getToken, onTokenChange, setToken } from './api.js';
import { AuditPage } from './pages/Audit.js';
import { InvitePage, LoginPage, SignupPage, VerifyEmailPage } from './pages/Auth.js';
import { ProjectPage } from './pages/Project.js';
import { ProjectsPage } from './pages/Projects.js';
import { SettingsPage } from './pages/Settings.js';
import { TeamPage } from './pages/Team.js';
import { TokensPage } from './pages/Tokens.js';
import { WebhooksPage } from './pages/Webhooks.js';
import { match, navigate, useLocation } from './router.js';
import { SessionCtx } from './session.js';
import { Shell } from './shell.js';
import type { SessionUser } from './types.js';
import { ErrorBanner, Spinner, ToastHost } from './ui.js';

/** Replaces the URL after the first render, once the router listens. */
function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, true), [to]);
  return null;
}

function App() {
  const [token, setTok] = useState(getToken());
  const [user, setUser] = useState<SessionUser | null>(null);
  const [error, setError] = useState<unknown>();
  const { path, query } = useLocation();

  useEffect(() => onTokenChange(() => setTok(getToken())), []);

  const refresh = useCallback(async () => {
    const res = await api.get<{ user: SessionUser }>('/auth/session');
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

  if (!token) {
    if (path === '/signup') return <SignupPage />;
    if (path !== '/login') return <Redirect to="/login" />;
    return <LoginPage />;
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
  if (path === '/' || path === '/login' || path === '/signup') return <Redirect to="/projects" />;
  let page = null;
  const m = match('/projects/:id', path);
  if (path === '/projects') page = <ProjectsPage />;
  else if (m) page = <ProjectPage id={m.id!} tab={query.get('tab')} env={query.get('env')} />;
  else if (path === '/tokens') page = <TokensPage />;
  else if (path === '/team') page = <TeamPage />;
  else if (path === '/webhooks') page = <WebhooksPage />;
  else if (path === '/audit') page = <AuditPage />;
  else if (path === '/settings') page = <SettingsPage />;
  else page = <ErrorBanner error={new Error(`Nothing here: ${path}`)} />;

  return (
    <SessionCtx.Provider value={{ user, refresh }}>
      <Shell
        path={path}
        onLogout={() => {
          setToken(null);
          navigate('/login', true);
        }}
      >
        {page}
      </Shell>
    </SessionCtx.Provider>
  );
}

render(
  <ToastHost>
    <App />
  </ToastHost>,
  document.getElementById('app')!,
);
