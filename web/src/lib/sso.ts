/**
 * D63's settings form, the parts without a page: the email domains as typed, and the redirect URI to register
 * at the identity provider before anything is saved.
 */

/**
 * "example.com, @Example.org\nacme.io" → ["example.com", "example.org", "acme.io"]: commas, spaces or new
 * lines between, a leading `@` (an address's habit) dropped, lower-cased, each once, in the order typed. What
 * is left is the server's to check (contract `ssoDomain`).
 */
export function parseDomains(text: string): string[] {
  const seen = new Set<string>();
  for (const part of text.split(/[\s,;]+/)) {
    const domain = part.replace(/^@+/, '').toLowerCase();
    if (domain) seen.add(domain);
  }
  return [...seen];
}

/**
 * The callback the identity provider must send people back to: the server answers it once it has a
 * configuration (or a test); before that the dashboard's own origin, which is PUBLIC_URL's when the
 * dashboard is opened at its public address.
 */
export function callbackUri(origin: string): string {
  return `${origin.replace(/\/+$/, '')}/v1/auth/sso/callback`;
}
