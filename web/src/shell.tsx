import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { listMyWorkspaces } from './api/account.js';
import { resendVerification, switchWorkspace } from './api/auth.js';
import { ApiError, setToken } from './api.js';
import { useEmailDelivery } from './hooks.js';
import { Icon } from './icons.js';
import { usePendingAccessCount } from './pages/access/useInbox.js';
import { navigate } from './router.js';
import { isOwner, useSession } from './session.js';
import { useAction, useToast } from './toast.js';
import type { MyWorkspace } from './types.js';
import { Link } from './ui.js';

const NAV = [
  { to: '/projects', label: 'Projects', icon: 'projects' },
  { to: '/tokens', label: 'Access tokens', icon: 'key' },
  // D39: the CLI builds this server serves, and the one-line install.
  { to: '/cli', label: 'Get the CLI', icon: 'terminal' },
  { to: '/team', label: 'Team', icon: 'team' },
  { to: '/webhooks', label: 'Webhooks', icon: 'webhook' },
  { to: '/audit', label: 'Audit log', icon: 'audit' },
  { to: '/settings', label: 'Settings', icon: 'settings' },
] as const;
/** D60: the workspace's Owners only, after Access tokens; the server refuses anyone else. */
const OWNER_NAV = { to: '/identities', label: 'Identities', icon: 'badge' } as const;
/** D74: the approver inbox, for those who administer some project (an Owner or a project Admin). */
const INBOX_NAV = { to: '/access-requests', label: 'Access requests', icon: 'inbox' } as const;
/** D69: the instance's administrators only; the server refuses anyone else. */
const ADMIN_NAV = { to: '/instance', label: 'Instance', icon: 'server' } as const;

export function Shell({
  path,
  onLogout,
  children,
}: {
  path: string;
  onLogout: () => void;
  children: ComponentChildren;
}) {
  const { user } = useSession();
  const [navOpen, setNavOpen] = useState(false);
  useEffect(() => setNavOpen(false), [path]);
  const inbox = usePendingAccessCount(path, user.id);
  return (
    <div class={`shell ${navOpen ? 'nav-open' : ''}`}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <button
          type="button"
          class="icon-btn nav-toggle"
          aria-label="Menu"
          aria-expanded={navOpen}
          onClick={() => setNavOpen(!navOpen)}
        >
          <Icon name="menu" size={20} />
        </button>
        <Link to="/projects" class="brand">
          <span class="brand-mark" aria-hidden="true" />
          svcenv
        </Link>
        <WorkspaceSwitcher />
        <div class="topbar-spacer" />
        <div class="user-chip" title={user.email}>
          <span class="avatar" aria-hidden="true">
            {user.name.slice(0, 1).toUpperCase()}
          </span>
          <span class="user-name">{user.name}</span>
        </div>
        <button type="button" class="btn btn-ghost btn-sm" onClick={onLogout}>
          Log out
        </button>
      </header>
      <nav class="sidebar" aria-label="Main">
        {[
          ...NAV.slice(0, 1),
          ...(inbox.admin ? [INBOX_NAV] : []),
          ...NAV.slice(1, 3),
          ...(isOwner(user) ? [OWNER_NAV] : []),
          ...NAV.slice(3),
          ...(user.instanceAdmin ? [ADMIN_NAV] : []),
        ].map((n) => (
          <Link key={n.to} to={n.to} class={`nav-item ${path.startsWith(n.to) ? 'active' : ''}`}>
            <Icon name={n.icon} />
            {n.label}
            {n.to === INBOX_NAV.to && inbox.count > 0 && (
              <span class="count-badge" data-testid="inbox-count" title="Pending access requests">
                {inbox.count}
              </span>
            )}
          </Link>
        ))}
        <div class="sidebar-foot muted">
          {user.workspaceName}
          <br />
          <span class="pill pill-neutral">{user.wsRole}</span>
        </div>
      </nav>
      <main id="main" class="content" tabIndex={-1}>
        {!user.emailVerifiedAt && <VerifyBanner userId={user.id} />}
        {children}
      </main>
    </div>
  );
}

/**
 * D11's reminder for an unverified address. Without email (ADR 0021) no link can reach the person, so the
 * banner says so instead of pointing at a message that never came, says that nothing depends on it, and can
 * be put away for good (remembered in this browser).
 */
function VerifyBanner({ userId }: { userId: string }) {
  const toast = useToast();
  const act = useAction();
  const [sent, setSent] = useState(false);
  const emailDelivery = useEmailDelivery();
  const dismissKey = `svcenv.no-email-notice.${userId}`;
  const [dismissed, setDismissed] = useState(() => readFlag(dismissKey));
  if (emailDelivery === undefined) return null;
  if (!emailDelivery) {
    if (dismissed) return null;
    return (
      <div class="alert alert-info banner" data-testid="verify-banner">
        <span>
          This server does not send email, so your address cannot be confirmed by a link. Nothing depends on it:
          everything works unverified. Your instance administrator can set up email (SMTP_URL).
        </span>
        <button
          type="button"
          class="linklike"
          onClick={() => {
            writeFlag(dismissKey);
            setDismissed(true);
          }}
        >
          Got it
        </button>
      </div>
    );
  }
  return (
    <div class="alert alert-info banner" data-testid="verify-banner">
      <span>Please verify your email address: we sent you a link when you signed up.</span>
      <button
        type="button"
        class="linklike"
        disabled={sent}
        onClick={() =>
          act(async () => {
            await resendVerification();
            setSent(true);
            toast('Verification email sent');
          })
        }
      >
        {sent ? 'Sent' : 'Resend the email'}
      </button>
    </div>
  );
}

/** A remembered "seen it" in this browser; storage may be unavailable (private modes), then nothing is kept. */
function readFlag(key: string): boolean {
  try {
    return localStorage.getItem(key) === '1';
  } catch {
    return false;
  }
}
function writeFlag(key: string): void {
  try {
    localStorage.setItem(key, '1');
  } catch {
    // Not kept: the notice comes back on the next load, which is harmless.
  }
}

/** The current workspace; the caller's other workspaces (GET /v1/me/workspaces, D12) to switch to. */
function WorkspaceSwitcher() {
  const { user } = useSession();
  const toast = useToast();
  const act = useAction();
  const [open, setOpen] = useState(false);
  const [list, setList] = useState<MyWorkspace[] | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    listMyWorkspaces()
      .then((r) => setList(r.workspaces))
      .catch((e) =>
        setErr(
          e instanceof ApiError && e.status === 404
            ? 'Workspace list is not available on this server.'
            : String(e.message),
        ),
      );
    const close = (e: MouseEvent) => {
      if (ref.current && !ref.current.contains(e.target as Node)) setOpen(false);
    };
    addEventListener('click', close);
    return () => removeEventListener('click', close);
  }, [open]);
  return (
    <div class="ws-switch" ref={ref}>
      <button
        type="button"
        class="ws-button"
        aria-haspopup="menu"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}
      >
        <span class="ws-name">{user.workspaceName}</span>
        <span aria-hidden="true">▾</span>
      </button>
      {open && (
        <div class="menu" role="menu" onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}>
          <div class="menu-label">Switch workspace</div>
          {err && <div class="menu-note">{err}</div>}
          {!list && !err && <div class="menu-note">Loading…</div>}
          {list?.map((w) => (
            <button
              type="button"
              role="menuitem"
              key={w.id}
              class={`menu-item ${w.id === user.workspaceId ? 'current' : ''}`}
              onClick={async () => {
                setOpen(false);
                if (w.id === user.workspaceId) return;
                await act(async () => {
                  const res = await switchWorkspace(w.id);
                  setToken(res.token);
                  navigate('/projects');
                  toast(`Switched to ${res.workspaceName}`);
                });
              }}
            >
              <span>{w.name}</span>
              <span class="muted small">{w.wsRole}</span>
            </button>
          ))}
        </div>
      )}
    </div>
  );
}
