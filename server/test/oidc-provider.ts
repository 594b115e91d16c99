import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import Provider from 'oidc-provider';

/**
 * A real OpenID Connect provider for single sign-on tests (D63): `oidc-provider` (certified by the OpenID
 * Foundation) on loopback, over plain http (svcenv reaches it with WEBHOOK_ALLOW_PRIVATE=true, as D5 allows).
 *
 * How to drive it:
 * - `startProvider({clients, accounts})` → `{issuer, close, ...}`. Configure svcenv's SSO with `issuer`, a
 *   client's `clientId` and `clientSecret` (its `redirectUris` must hold PUBLIC_URL/v1/auth/sso/callback).
 * - Signing in is oidc-provider's development login form (devInteractions): the authorization URL redirects
 *   to `/interaction/<uid>`, a page with a form (`input[name=login]`, `input[name=password]`, a submit
 *   button). Any password is accepted; `login` is the account's key in `accounts`. Consent is granted
 *   without asking (loadExistingGrant), so after the form the browser goes straight back to the client.
 *   - In a browser (Chromium): navigate to svcenv's `/v1/auth/sso/start?email=...`, fill `login` and
 *     `password`, click the button; the browser lands on svcenv's dashboard signed in.
 *   - Over HTTP: `signIn(authorizationUrl, login)` follows the redirects with the provider's cookies, posts
 *     the form, and returns the URL the provider sends the browser back to (`redirect_uri?code&state&iss`),
 *     or with `?error=` when `abort` is set (the person cancelled: `access_denied`).
 * - `tamperIdToken(fn)`: until reset with `null`, every token answer's ID token is replaced by what `fn`
 *   returns from the genuine one: `sign(claims)` signs claims with the provider's own key, so a test can
 *   make an ID token with a wrong `aud`, or hand back an ID token captured from another flow.
 */
export interface ProviderClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

export interface ProviderAccount {
  email: string;
  emailVerified: boolean;
  name?: string;
}

export interface StartedProvider {
  issuer: string;
  /** The ID tokens the token endpoint answered, in order (genuine ones, before any tampering). */
  idTokens: string[];
  tamperIdToken(fn: ((genuine: string) => Promise<string> | string) | null): void;
  /** A JWT signed by the provider's own key (RS256, its kid). */
  sign(claims: JWTPayload): Promise<string>;
  signIn(authorizationUrl: string, login: string, opts?: { abort?: boolean }): Promise<string>;
  close(): Promise<void>;
}

export async function startProvider(opts: {
  clients: ProviderClient[];
  accounts: Record<string, ProviderAccount>;
  /** A fixed port, for a Chromium test that needs to know it early; default: any free one. */
  port?: number;
}): Promise<StartedProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-rs256', alg: 'RS256', use: 'sig' };
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: opts.clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: c.redirectUris,
      response_types: ['code'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    jwks: { keys: [jwk as never] },
    cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    // The email claims in the ID token itself (not only at userinfo), as most providers send them.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, sub) {
      const account = opts.accounts[sub];
      if (!account) return undefined;
      return {
        accountId: sub,
        async claims() {
          return {
            sub,
            email: account.email,
            email_verified: account.emailVerified,
            ...(account.name ? { name: account.name } : {}),
          };
        },
      };
    },
    // Consent is granted without a page: the tests are about the relying party.
    async loadExistingGrant(ctx) {
      const client = ctx.oidc.client!;
      const accountId = ctx.oidc.session!.accountId!;
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  provider.proxy = false;

  const idTokens: string[] = [];
  let tamper: ((genuine: string) => Promise<string> | string) | null = null;
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path === '/token' && ctx.status === 200 && ctx.body && typeof ctx.body === 'object') {
      const body = ctx.body as { id_token?: string };
      if (typeof body.id_token === 'string') {
        idTokens.push(body.id_token);
        if (tamper) ctx.body = { ...body, id_token: await tamper(body.id_token) };
      }
    }
  });
  server.on('request', provider.callback());

  const sign = (claims: JWTPayload) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: jwk.kid!, typ: 'JWT' }).sign(privateKey);

  async function signIn(authorizationUrl: string, login: string, o: { abort?: boolean } = {}): Promise<string> {
    const jar = new Map<string, string>();
    const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const remember = (res: Response) => {
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair!.indexOf('=');
        jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
      }
    };
    let url = authorizationUrl;
    let posted = false;
    for (let hop = 0; hop < 10; hop++) {
      if (!url.startsWith(issuer)) return url; // back to the client
      const interaction = /\/interaction\/[^/?]+$/.test(new URL(url).pathname);
      let res: Response;
      if (interaction && o.abort) {
        res = await fetch(`${url}/abort`, { headers: { cookie: cookieHeader() }, redirect: 'manual' });
      } else if (interaction && !posted) {
        posted = true;
        res = await fetch(url, {
          method: 'POST',
          headers: { cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString(),
          redirect: 'manual',
        });
      } else {
        res = await fetch(url, { headers: { cookie: cookieHeader() }, redirect: 'manual' });
      }
      remember(res);
      const location = res.headers.get('location');
      if (!location) throw new Error(`provider answered ${res.status} at ${url}: ${(await res.text()).slice(0, 500)}`);
      url = new URL(location, url).toString();
    }
    throw new Error('too many redirects at the provider');
  }

  return {
    issuer,
    idTokens,
    tamperIdToken(fn) {
      tamper = fn;
    },
    sign,
    signIn,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The claims of a JWT, unverified (for a test to build a tampered copy). */
export const claimsOf = (jwt: string): JWTPayload => decodeJwt(jwt);
