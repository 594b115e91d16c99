import { ssoStartUrl } from '../api/sso.js';
import { ApiError } from '../api.js';
import { EmailField } from '../components/TextField.js';
import { useSubmit } from '../hooks.js';
import { ssoErrorWords } from '../lib/error-words.js';
import { afterLogin } from '../lib/next.js';
import { Button, FormError } from '../ui.js';

/**
 * D63 on the login page: single sign-on by work email. The server's start answers with a redirect to the
 * workspace's identity provider, which the page follows by navigating (not fetch: the provider is another
 * site and shows its own login page); the provider sends the browser back to the server's callback, which
 * lands on `/` signed in, or on `/login?sso_error=<reason>`.
 */

/** Where to go once the provider has signed the person in: the callback lands on `/`, which reads this. */
const NEXT_KEY = 'svcenv.sso-next';

/** The page asked for before an SSO login (ADR 0014's `next`), once: null when there was none. */
export function takeSsoNext(): string | null {
  try {
    const next = sessionStorage.getItem(NEXT_KEY);
    sessionStorage.removeItem(NEXT_KEY);
    return next === null ? null : afterLogin(next);
  } catch {
    return null;
  }
}

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).trim();
}

/**
 * Starts single sign-on for `email`: the server is asked first (api.redirectTarget), so that an address whose
 * domain no workspace claims reads as a sentence under the field, not as the server's 404 page.
 */
function useSsoStart(next: string | undefined) {
  const { busy, error, submit } = useSubmit();
  const start = (email: string) =>
    submit(async () => {
      let url: string;
      try {
        url = await ssoStartUrl(email.trim());
      } catch (e) {
        if (e instanceof ApiError && e.code === 'NOT_FOUND') {
          throw new ApiError(
            404,
            'NOT_FOUND',
            `No single sign-on is set up for ${domainOf(email)}. Log in with your password, or check the address.`,
            'email',
          );
        }
        throw e;
      }
      try {
        if (next && next !== '/projects') sessionStorage.setItem(NEXT_KEY, next);
      } catch {
        // Storage refused (a private window's quota): the login still works and lands on the projects.
      }
      location.assign(url);
      // The page is being left: keep the button busy until it is.
      await new Promise(() => undefined);
    });
  return { busy, error, start };
}

/** The SSO way of the login page: a work email, then off to the identity provider. */
export function SsoForm({
  email,
  onEmail,
  next,
  onPassword,
}: {
  email: string;
  onEmail: (email: string) => void;
  next?: string;
  /** Back to the password form. */
  onPassword: () => void;
}) {
  const { busy, error, start } = useSsoStart(next);
  return (
    <form class="stack" data-testid="sso-form" onSubmit={start(email)}>
      <p class="muted small">
        Type your work email: you continue on your organisation’s sign-in page and come back here signed in.
      </p>
      <EmailField label="Work email" value={email} onValue={onEmail} error={error} autocomplete="username" autofocus />
      <FormError error={error} fields={['email']} />
      <Button type="submit" variant="primary" busy={busy}>
        Continue with SSO
      </Button>
      <button type="button" class="linklike" onClick={onPassword}>
        Log in with a password instead
      </button>
    </form>
  );
}

/**
 * A password login refused with SSO_REQUIRED (D63 `enforce`): the workspace signs its people in through its
 * identity provider, so say so and offer that way with the same address.
 */
export function SsoRequired({ email, next }: { email: string; next?: string }) {
  const { busy, error, start } = useSsoStart(next);
  return (
    <div class="alert alert-info sso-required" role="alert" data-testid="sso-required">
      <div class="stack">
        <span>
          <strong>{email}</strong> signs in through your organisation’s identity provider (single sign-on), not with a
          password.
        </span>
        <div>
          <Button variant="primary" busy={busy} onClick={start(email)}>
            Continue with SSO
          </Button>
        </div>
        <FormError error={error} />
      </div>
    </div>
  );
}

/** `/login?sso_error=<reason>`: what went wrong, in words from the closed list (never the query's text). */
export function SsoErrorNotice({ reason }: { reason: string | null }) {
  const words = ssoErrorWords(reason);
  if (!words) return null;
  return (
    <div class="alert alert-error" role="alert" data-testid="sso-error">
      <div>
        <strong class="alert-title">Single sign-on failed:</strong> <span>{words}</span>
      </div>
    </div>
  );
}
