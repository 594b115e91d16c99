import type { SsoConfig, TestSsoResponse } from '@svcenv/contract';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { deleteSso, getSso, putSso, testSso } from '../../api/sso.js';
import { ApiError } from '../../api.js';
import { TextField } from '../../components/TextField.js';
import { useAsync, useSubmit } from '../../hooks.js';
import { fieldWords } from '../../lib/error-words.js';
import { callbackUri, parseDomains } from '../../lib/sso.js';
import { isOwner, useSession } from '../../session.js';
import { useToast } from '../../toast.js';
import { Async, Button, Confirm, CopyButton, Field, FormError, Pill } from '../../ui.js';
import { SettingsCard } from './SettingsCard.js';

/**
 * D63: the workspace's single sign-on (OpenID Connect), for its Owners only: the server refuses anyone else,
 * so the card is not shown to them at all.
 */
export function SingleSignOn() {
  const { user } = useSession();
  if (!isOwner(user)) return null;
  return <SsoCard />;
}

/** The configuration, or null while there is none (the server answers 404). */
async function loadSso(): Promise<SsoConfig | null> {
  try {
    return await getSso();
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

function SsoCard() {
  const state = useAsync(loadSso, []);
  return (
    <SettingsCard title="Single sign-on" wide>
      <Async state={state}>
        {(config) => (
          // A new form after a save or a removal, from what the server answered.
          <SsoForm key={config?.updatedAt ?? 'none'} config={config} onChanged={(c) => state.setData(c)} />
        )}
      </Async>
    </SettingsCard>
  );
}

const TEST_FAILURE_TITLES: Record<Extract<TestSsoResponse, { ok: false }>['reason'], string> = {
  issuer_refused: 'This issuer address is not allowed',
  discovery_failed: 'The issuer did not answer',
  issuer_mismatch: 'The issuer is named differently',
  unsupported: 'The provider lacks what svcenv needs',
  jwks_failed: 'The provider’s signing keys could not be read',
};

/** `domains.1` (the API's path for the second domain) is the domains field's error too. */
function domainsError(error: unknown): unknown {
  if (error instanceof ApiError && error.field?.startsWith('domains.')) {
    return new ApiError(error.status, error.code, `${fieldWords(error.field)}: ${error.message}`, 'domains');
  }
  return error;
}

function SsoForm({ config, onChanged }: { config: SsoConfig | null; onChanged: (c: SsoConfig | null) => void }) {
  const toast = useToast();
  const [issuer, setIssuer] = useState(config?.issuer ?? '');
  const [clientId, setClientId] = useState(config?.clientId ?? '');
  // Write-only (D63): the stored secret is never answered; typing one replaces it.
  const [secret, setSecret] = useState('');
  const [replacing, setReplacing] = useState(!config);
  const [domains, setDomains] = useState(config?.domains.join(', ') ?? '');
  const [enforce, setEnforce] = useState(config?.enforce ?? false);
  const [tested, setTested] = useState<TestSsoResponse | null>(null);
  const [removing, setRemoving] = useState(false);
  const save = useSubmit();
  const test = useSubmit();
  const error = domainsError(save.error ?? test.error);

  // Any change makes an earlier test's answer stale.
  const edit =
    <T,>(set: (v: T) => void) =>
    (v: T) => {
      set(v);
      setTested(null);
    };
  const body = () => ({
    issuer: issuer.trim(),
    clientId: clientId.trim(),
    ...(secret ? { clientSecret: secret } : {}),
    domains: parseDomains(domains),
    enforce,
  });
  const redirectUri = config?.redirectUri ?? (tested?.ok ? tested.redirectUri : callbackUri(location.origin));

  return (
    <>
      <form
        class="stack sso-form"
        onSubmit={save.submit(async () => {
          const saved = await putSso(body());
          toast(config ? 'Single sign-on updated' : 'Single sign-on set up');
          onChanged(saved);
        })}
      >
        <p class="muted">
          People with an email address in your domains sign in through your identity provider (OpenID Connect). Their
          first sign-in makes them a Member of this workspace.
        </p>
        <div class="sso-status">
          {config ? <Pill tone="ok">On for {config.domains.join(', ')}</Pill> : <Pill>Not set up</Pill>}
          {config?.enforce && <Pill tone="warn">Password login refused</Pill>}
        </div>

        <Group label="Redirect URI" hint="Register this at your identity provider as the redirect (callback) URI.">
          <div class="once-row">
            <code class="sso-uri" data-testid="sso-redirect-uri" data-copy-source={redirectUri.slice(0, 16)}>
              {redirectUri}
            </code>
            <CopyButton text={redirectUri} />
          </div>
        </Group>

        {config && (
          <Group label="Sign-in link" hint="Your people can bookmark this to sign in without typing their email.">
            <div class="once-row">
              <code class="sso-uri" data-testid="sso-login-url" data-copy-source={config.loginUrl.slice(0, 16)}>
                {config.loginUrl}
              </code>
              <CopyButton text={config.loginUrl} />
            </div>
          </Group>
        )}

        <div class="sso-fields">
          <TextField
            label="Issuer URL"
            name="issuer"
            type="url"
            value={issuer}
            onValue={edit(setIssuer)}
            error={error}
            required
            hint={
              <>
                Exactly as the provider names itself, e.g. <code>https://id.example.com/realms/acme</code>.
              </>
            }
          />
          <TextField
            label="Client ID"
            name="clientId"
            value={clientId}
            onValue={edit(setClientId)}
            error={error}
            required
            autocomplete="off"
          />
          {replacing ? (
            <TextField
              label="Client secret"
              name="clientSecret"
              type="password"
              value={secret}
              onValue={edit(setSecret)}
              error={error}
              required={!config}
              autocomplete="off"
              hint={config ? 'Leave empty to keep the stored secret.' : 'Stored encrypted; never shown again.'}
            />
          ) : (
            <Group label="Client secret">
              <div class="sso-secret">
                <Pill tone="ok">Stored</Pill>
                <Button size="sm" onClick={() => setReplacing(true)}>
                  Replace
                </Button>
              </div>
            </Group>
          )}
          <Field
            label="Email domains"
            name="domains"
            error={error}
            hint="Separated by commas or new lines, e.g. example.com. A new domain must be that of your own verified email (an instance administrator may add any); each belongs to one workspace only."
          >
            <textarea
              class="input"
              name="domains"
              rows={2}
              placeholder="example.com"
              value={domains}
              required
              onInput={(e) => edit(setDomains)(e.currentTarget.value)}
            />
          </Field>
        </div>

        <label class="check sso-enforce">
          <input
            type="checkbox"
            role="switch"
            aria-checked={enforce}
            name="enforce"
            checked={enforce}
            onChange={(e) => edit(setEnforce)(e.currentTarget.checked)}
          />
          <span>
            <strong>Require single sign-on</strong>
            <span class="muted small sso-enforce-note">
              Password login is refused for these domains. The workspace’s Owners keep their password, so nobody is
              locked out if the provider fails.
            </span>
          </span>
        </label>

        {tested && <TestResult result={tested} />}
        <FormError error={error} fields={['issuer', 'clientId', 'clientSecret', 'domains']} />

        <div class="sso-actions">
          <Button
            busy={test.busy}
            onClick={test.submit(async () => {
              save.setError(undefined);
              const { domains: list, ...rest } = body();
              setTested(await testSso({ ...rest, ...(list.length ? { domains: list } : {}) }));
            })}
          >
            Test the connection
          </Button>
          <Button type="submit" variant="primary" busy={save.busy}>
            {config ? 'Save' : 'Set up single sign-on'}
          </Button>
          {config && (
            <Button variant="danger" class="sso-remove" onClick={() => setRemoving(true)}>
              Remove
            </Button>
          )}
        </div>
      </form>
      {removing && (
        <Confirm
          title="Remove single sign-on?"
          body={
            <>
              People of {config?.domains.join(', ')} can no longer sign in through the identity provider; those without
              a password set one with “Forgot password?”. Their accounts and memberships stay.
            </>
          }
          action="Remove"
          onClose={() => setRemoving(false)}
          onConfirm={async () => {
            await deleteSso();
            toast('Single sign-on removed');
            onChanged(null);
          }}
        />
      )}
    </>
  );
}

/**
 * A labelled row that is not a form control's <label>: a <label> around a button (Copy, Replace) would make
 * its text the button's accessible name.
 */
function Group({ label, hint, children }: { label: string; hint?: string; children: ComponentChildren }) {
  return (
    <fieldset class="field sso-group">
      <legend class="field-label">{label}</legend>
      {children}
      {hint && <span class="field-hint">{hint}</span>}
    </fieldset>
  );
}

/** The test's answer in words, before anything is saved. */
function TestResult({ result }: { result: TestSsoResponse }) {
  if (result.ok) {
    return (
      <div class="alert alert-ok" role="status" data-testid="sso-test-result">
        <div>
          <strong class="alert-title">The provider answered.</strong>{' '}
          <span>
            Sign-in goes to <code>{result.authorizationEndpoint}</code>, codes are exchanged at{' '}
            <code>{result.tokenEndpoint}</code>, and it publishes {result.jwksKeys} signing{' '}
            {result.jwksKeys === 1 ? 'key' : 'keys'}. The client ID and secret are checked at the first sign-in.
          </span>
        </div>
      </div>
    );
  }
  return (
    <div class="alert alert-error" role="alert" data-testid="sso-test-result">
      <div>
        <strong class="alert-title">{TEST_FAILURE_TITLES[result.reason] ?? 'The test failed'}:</strong>{' '}
        <span>{result.message}</span>
      </div>
    </div>
  );
}
