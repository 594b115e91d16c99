import { useEffect, useState } from 'preact/hooks';
import { changePassword, disableMfa, enableMfa, regenerateBackupCodes, setupMfa, updateMe } from '../api/account.js';
import { getBilling, getConnections, getStats, renameWorkspace } from '../api/workspace.js';
import { ApiError, setToken } from '../api.js';
import { CodeField } from '../components/CodeField.js';
import { useAsync, useSubmit } from '../hooks.js';
import { relativeTime } from '../lib/format.js';
import { navigate } from '../router.js';
import { isOwner, useSession } from '../session.js';
import { useToast } from '../toast.js';
import type { MfaSetup } from '../types.js';
import { Async, Button, CopyButton, ErrorBanner, Field, FormError, PageHeader, Pill, Spinner } from '../ui.js';

export function SettingsPage() {
  return (
    <>
      <PageHeader title="Settings" />
      <div class="settings-grid">
        <Profile />
        <Password />
        <TwoFactor />
        <WorkspaceName />
        <Plan />
        <Operator />
      </div>
    </>
  );
}

function Card({ title, children, wide }: { title: string; children: preact.ComponentChildren; wide?: boolean }) {
  return (
    <section class={`card ${wide ? 'card-wide' : ''}`} aria-label={title}>
      <h2 class="card-title">{title}</h2>
      {children}
    </section>
  );
}

function Profile() {
  const { user, refresh } = useSession();
  const toast = useToast();
  const [name, setName] = useState(user.name);
  const { busy, error, submit } = useSubmit();
  return (
    <Card title="Profile">
      <form
        class="stack"
        onSubmit={submit(async () => {
          await updateMe({ name });
          await refresh();
          toast('Profile saved');
        })}
      >
        <Field label="Name" name="name" error={error}>
          <input class="input" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
        </Field>
        <Field label="Email">
          <div class="static-value">
            {user.email}{' '}
            {user.emailVerifiedAt ? <Pill tone="ok">verified</Pill> : <Pill tone="warn">not verified</Pill>}
          </div>
        </Field>
        <FormError error={error} fields={['name']} />
        <div>
          <Button type="submit" busy={busy}>
            Save profile
          </Button>
        </div>
      </form>
    </Card>
  );
}

function Password() {
  const toast = useToast();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const { busy, error, submit } = useSubmit();
  return (
    <Card title="Password">
      <form
        class="stack"
        onSubmit={submit(async () => {
          await changePassword({ currentPassword: current, newPassword: next });
          // D9: a password change ends every earlier session, this one included.
          toast('Password changed. Log in with the new password.');
          setToken(null);
          navigate('/login', true);
        })}
      >
        <Field label="Current password" name="currentPassword" error={error}>
          <input
            class="input"
            type="password"
            autocomplete="current-password"
            value={current}
            onInput={(e) => setCurrent(e.currentTarget.value)}
            required
          />
        </Field>
        <Field
          label="New password"
          name="newPassword"
          error={error}
          hint="8 to 128 characters. You will be logged out."
        >
          <input
            class="input"
            type="password"
            autocomplete="new-password"
            minLength={8}
            value={next}
            onInput={(e) => setNext(e.currentTarget.value)}
            required
          />
        </Field>
        <FormError error={error} fields={['currentPassword', 'newPassword']} />
        <div>
          <Button type="submit" busy={busy}>
            Change password
          </Button>
        </div>
      </form>
    </Card>
  );
}

/**
 * D12/D13: setup → QR + secret → confirm with a code → backup codes shown once. Enabling ends every
 * earlier session (D9), this one included, so the user logs in again with the new second factor. The
 * session does not say whether two-factor is on: a setup answered 409 means it is, and then the card
 * offers new backup codes and turning it off (both need a current code).
 */
function TwoFactor() {
  const [setup, setSetup] = useState<MfaSetup | null>(null);
  const [enabled, setEnabled] = useState(false);
  const [qr, setQr] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<{ list: string[]; relogin: boolean } | null>(null);
  const { busy, error, setError, submit } = useSubmit();
  const toast = useToast();

  useEffect(() => {
    if (!setup) return;
    // The QR library is loaded only here, so it is not in the main bundle.
    import('qrcode')
      .then((QR) => QR.toDataURL(setup.otpauthUrl, { margin: 1, width: 200, errorCorrectionLevel: 'M' }))
      .then(setQr)
      .catch(setError);
  }, [setup]);

  /** Every step takes the code typed above; it is cleared once the step succeeds. */
  const withCode = (fn: () => Promise<void>) =>
    submit(async () => {
      await fn();
      setCode('');
    });
  const codeField = (label: string) => <CodeField label={label} value={code} onValue={setCode} error={error} />;

  if (codes) {
    return (
      <Card title="Two-factor authentication">
        <div class="stack">
          <div class="alert alert-ok" role="status">
            {codes.relogin
              ? 'Two-factor authentication is on.'
              : 'New backup codes generated; the old ones no longer work.'}
          </div>
          <p>
            Save these backup codes somewhere safe. Each works once if you lose your device; they are not shown again.
          </p>
          <ul class="backup-codes" data-testid="backup-codes">
            {codes.list.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ul>
          <div class="row-end">
            <CopyButton text={codes.list.join('\n')} label="Copy all" />
            <Button
              variant="primary"
              onClick={() => {
                if (!codes.relogin) return setCodes(null);
                // D9: enabling two-factor ended this session; log in again with the authenticator.
                setToken(null);
                navigate('/login', true);
              }}
            >
              {codes.relogin ? 'Done, log in again' : 'Done'}
            </Button>
          </div>
        </div>
      </Card>
    );
  }
  if (setup) {
    return (
      <Card title="Two-factor authentication">
        <form
          class="stack"
          onSubmit={withCode(async () => {
            const res = await enableMfa(code);
            setCodes({ list: res.backupCodes, relogin: true });
            setSetup(null);
          })}
        >
          <p>
            Scan this code with an authenticator app (1Password, Google Authenticator, …), then enter the 6-digit code.
          </p>
          <div class="qr-row">
            {qr ? (
              <img class="qr" src={qr} alt="QR code for your authenticator app" width={200} height={200} />
            ) : (
              <Spinner />
            )}
            <div class="stack">
              <span class="muted small">Or enter this key by hand:</span>
              <code class="secret-key" data-testid="mfa-secret">
                {setup.secret}
              </code>
            </div>
          </div>
          {codeField('Code from the app')}
          <FormError error={error} fields={['code']} />
          <p class="muted small">Turning it on logs you out everywhere; log in again with a code.</p>
          <div class="row-end">
            <Button onClick={() => setSetup(null)}>Cancel</Button>
            <Button type="submit" variant="primary" busy={busy}>
              Turn on
            </Button>
          </div>
        </form>
      </Card>
    );
  }
  if (enabled) {
    return (
      <Card title="Two-factor authentication">
        <form
          class="stack"
          onSubmit={(e) => {
            const action = ((e as SubmitEvent).submitter as HTMLButtonElement | null)?.value;
            return withCode(async () => {
              if (action === 'disable') {
                await disableMfa(code);
                toast('Two-factor authentication is off. Log in again.');
                setToken(null);
                navigate('/login', true);
              } else {
                const res = await regenerateBackupCodes(code);
                setCodes({ list: res.backupCodes, relogin: false });
              }
            })(e);
          }}
        >
          <div>
            <Pill tone="ok">on</Pill> <span class="muted">A code is asked for at every login.</span>
          </div>
          {codeField('Current code or a backup code')}
          <FormError error={error} fields={['code']} />
          <div class="row-end">
            <Button type="submit" value="codes" busy={busy}>
              New backup codes
            </Button>
            <Button type="submit" value="disable" variant="danger" busy={busy}>
              Turn off
            </Button>
          </div>
        </form>
      </Card>
    );
  }
  return (
    <Card title="Two-factor authentication">
      <div class="stack">
        <p class="muted">Ask for a code from an authenticator app at every login.</p>
        <FormError error={error} />
        <div>
          <Button
            busy={busy}
            onClick={submit(async () => {
              try {
                setSetup(await setupMfa());
              } catch (err) {
                // 409: it is on already (the session does not say), so the card offers what fits that.
                if (err instanceof ApiError && err.status === 409) setEnabled(true);
                else if (err instanceof ApiError && err.status === 404)
                  throw new Error('Two-factor authentication is not available on this server yet.');
                else throw err;
              }
            })}
          >
            Set up two-factor
          </Button>
        </div>
      </div>
    </Card>
  );
}

function WorkspaceName() {
  const { user, refresh } = useSession();
  const toast = useToast();
  const [name, setName] = useState(user.workspaceName);
  const { busy, error, submit } = useSubmit();
  const owner = isOwner(user);
  return (
    <Card title="Workspace">
      <form
        class="stack"
        onSubmit={submit(async () => {
          await renameWorkspace({ name });
          await refresh();
          toast('Workspace renamed');
        })}
      >
        <Field
          label="Name"
          name="name"
          error={error}
          hint={owner ? undefined : 'Only Owners can rename the workspace.'}
        >
          <input
            class="input"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            disabled={!owner}
            required
          />
        </Field>
        <FormError error={error} fields={['name']} />
        {owner && (
          <div>
            <Button type="submit" busy={busy}>
              Rename
            </Button>
          </div>
        )}
      </form>
    </Card>
  );
}

function Meter({ label, used, limit }: { label: string; used: number; limit: number }) {
  const pct = limit < 0 ? 0 : Math.min(100, Math.round((used / Math.max(limit, 1)) * 100));
  return (
    <div class="meter">
      <div class="meter-head">
        <span>{label}</span>
        <span class="muted small">
          {used} / {limit < 0 ? 'unlimited' : limit}
        </span>
      </div>
      <div
        class="meter-bar"
        role="progressbar"
        aria-label={label}
        aria-valuenow={pct}
        aria-valuemin={0}
        aria-valuemax={100}
      >
        <span class={pct >= 100 ? 'full' : pct >= 80 ? 'high' : ''} style={{ width: `${limit < 0 ? 4 : pct}%` }} />
      </div>
    </div>
  );
}

/**
 * D15: there is no endpoint that changes a plan; on a self-hosted install an operator lifts the limits on
 * the server. Said here, beside the meters, so the 4th project or member is not a dead end (the server's
 * PLAN_LIMIT message says the same).
 */
function LiftLimits({ plan, workspaceId }: { plan: string; workspaceId: string }) {
  const to = plan === 'team' ? 'enterprise' : 'team|enterprise';
  const command = `npm run admin -- set-plan ${workspaceId} ${to}`;
  return (
    <div class="note small" data-testid="lift-limits">
      <p>Self-hosted? These are the {plan} plan's limits, and a server operator lifts them with:</p>
      <div class="once-row">
        <code class="once-value" data-copy-source={command.slice(0, 16)}>
          {command}
        </code>
        <CopyButton text={command} />
      </div>
      <p>
        <code>DEFAULT_PLAN=team</code> (or <code>enterprise</code>) in the server's environment sets the plan of new
        workspaces.
      </p>
    </div>
  );
}

function Plan() {
  const { user } = useSession();
  const billing = useAsync(getBilling, []);
  const stats = useAsync(getStats, []);
  return (
    <Card title="Plan and usage" wide>
      <Async state={billing}>
        {(b) => (
          <div class="stack">
            <div>
              Plan <Pill tone="info">{b.plan}</Pill>
              <span class="muted small">
                {' '}
                · environments per project: {b.limits.envsPerProject < 0 ? 'unlimited' : b.limits.envsPerProject}
              </span>
            </div>
            <Meter label="Projects" used={b.usage.projects} limit={b.limits.projects} />
            <Meter label="Members (pending invites count)" used={b.usage.members} limit={b.limits.members} />
            {b.plan !== 'enterprise' && <LiftLimits plan={b.plan} workspaceId={user.workspaceId} />}
          </div>
        )}
      </Async>
      {stats.error ? (
        <ErrorBanner error={stats.error} />
      ) : stats.data ? (
        <dl class="stats">
          <div>
            <dt>Members</dt>
            <dd>{stats.data.memberCount}</dd>
          </div>
          <div>
            <dt>Projects</dt>
            <dd>{stats.data.projectCount}</dd>
          </div>
          <div>
            <dt>Variables</dt>
            <dd>{stats.data.variableCount}</dd>
          </div>
          <div>
            <dt>Active tokens</dt>
            <dd>{stats.data.tokenCount}</dd>
          </div>
        </dl>
      ) : null}
    </Card>
  );
}

function Operator() {
  const conn = useAsync(getConnections, []);
  return (
    <Card title="Kubernetes operator">
      <Async state={conn}>
        {(c) => (
          <div class="stack">
            <div>
              <span class={`status-dot ${c.operator.connected ? 'on' : 'off'}`} aria-hidden="true" />{' '}
              {c.operator.connected ? 'Connected' : 'Not connected'}
            </div>
            <p class="muted small">
              Last sync: {c.operator.lastSync ? relativeTime(c.operator.lastSync) : 'never'}. The operator counts as
              connected when it pulled in the last 10 minutes (with <code>X-Svcenv-Client: operator</code>).
            </p>
          </div>
        )}
      </Async>
    </Card>
  );
}
