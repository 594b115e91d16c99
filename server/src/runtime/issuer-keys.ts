import { createLocalJWKSet, type JSONWebKeySet } from 'jose';
import type { Clock } from '../lib/clock.js';
import { FetchFailed, fetchGuarded, type Resolver } from '../lib/net-guard.js';

/**
 * D60: the signing keys of each workload-identity issuer, per process. The keys come from the `jwks_uri` of
 * `<issuer>/.well-known/openid-configuration`, fetched on D5's rules (lib/net-guard.ts: public addresses
 * unless WEBHOOK_ALLOW_PRIVATE, never metadata addresses, connected to the checked address, no redirects),
 * within 5 s and 256 KiB per document.
 *
 * - Concurrent logins that need the same issuer's keys wait for one fetch (coalesced).
 * - Keys are kept 10 minutes, then fetched again on the next login; if that fetch fails the old keys keep
 *   serving (an issuer's brief outage does not stop every CI job), for at most a day.
 * - A token whose `kid` is not among the cached keys (the issuer rotated) makes one refetch, at most once per
 *   60 s per issuer, so tokens with made-up kids cannot turn the server into a fetch amplifier.
 * - After a failed fetch with nothing cached, logins fail fast for 10 s instead of each waiting 5 s.
 */
export const ISSUER_FETCH_TIMEOUT_MS = 5_000;
export const ISSUER_DOC_MAX_BYTES = 256 * 1024;
const FRESH_MS = 10 * 60_000;
const STALE_MAX_MS = 24 * 3_600_000;
export const KID_REFETCH_GAP_MS = 60_000;
const FAILURE_BACKOFF_MS = 10_000;
const MAX_ISSUERS = 1_000;

export type KeyGetter = ReturnType<typeof createLocalJWKSet>;

/**
 * An issuer's discovery document address (D60's issuers and D63's): the issuer without its trailing slash,
 * then the well-known path (OpenID Connect Discovery 1.0 section 4).
 */
export const discoveryUrl = (issuer: string) => `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;

export class IssuerUnavailable extends Error {}

interface Entry {
  keys: KeyGetter | null;
  fetchedAt: number;
  failedAt: number;
  /** When the last refetch for an unknown kid started. */
  kidRefetchAt: number;
  inflight: Promise<KeyGetter> | null;
}

export interface IssuerKeysOptions {
  clock: Clock;
  allowPrivate: boolean;
  resolve: Resolver;
  timeoutMs?: number;
  maxBytes?: number;
}

export class IssuerKeyCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly opts: IssuerKeysOptions) {}

  /** The issuer's keys: cached, or fetched once for everyone waiting. Throws IssuerUnavailable. */
  async keys(issuer: string): Promise<KeyGetter> {
    const now = this.opts.clock.now().getTime();
    const e = this.entry(issuer);
    if (e.keys && now - e.fetchedAt < FRESH_MS) return e.keys;
    if (e.inflight) return this.settle(e, e.inflight);
    if (now - e.failedAt < FAILURE_BACKOFF_MS) {
      if (e.keys && now - e.fetchedAt < STALE_MAX_MS) return e.keys;
      throw new IssuerUnavailable('recent failure');
    }
    return this.settle(e, this.start(issuer, e));
  }

  /**
   * After a token named a kid the cached keys lack: fresh keys, or null when this issuer's keys were already
   * refetched for that reason within the last 60 s (the caller then refuses the token).
   */
  async refetchForUnknownKid(issuer: string): Promise<KeyGetter | null> {
    const e = this.entry(issuer);
    if (e.inflight) return this.settle(e, e.inflight);
    const now = this.opts.clock.now().getTime();
    if (now - e.kidRefetchAt < KID_REFETCH_GAP_MS) return null;
    e.kidRefetchAt = now;
    return this.settle(e, this.start(issuer, e));
  }

  private entry(issuer: string): Entry {
    let e = this.entries.get(issuer);
    if (!e) {
      if (this.entries.size >= MAX_ISSUERS) this.entries.delete(this.entries.keys().next().value as string);
      e = { keys: null, fetchedAt: 0, failedAt: 0, kidRefetchAt: 0, inflight: null };
      this.entries.set(issuer, e);
    }
    return e;
  }

  private start(issuer: string, e: Entry): Promise<KeyGetter> {
    const p = this.fetchKeys(issuer).then(
      (keys) => {
        e.keys = keys;
        e.fetchedAt = this.opts.clock.now().getTime();
        e.inflight = null;
        return keys;
      },
      (err: unknown) => {
        e.failedAt = this.opts.clock.now().getTime();
        e.inflight = null;
        throw err;
      },
    );
    e.inflight = p;
    return p;
  }

  /** A fetch's keys; when it failed, the keys held before it while they are less than a day old. */
  private async settle(e: Entry, p: Promise<KeyGetter>): Promise<KeyGetter> {
    const previous = e.keys;
    const previousAt = e.fetchedAt;
    try {
      return await p;
    } catch (err) {
      if (previous && this.opts.clock.now().getTime() - previousAt < STALE_MAX_MS) return previous;
      throw err instanceof IssuerUnavailable ? err : new IssuerUnavailable(String(err));
    }
  }

  private async fetchKeys(issuer: string): Promise<KeyGetter> {
    const get = async (url: string) => {
      try {
        return JSON.parse(
          (
            await fetchGuarded(url, {
              allowPrivate: this.opts.allowPrivate,
              resolve: this.opts.resolve,
              timeoutMs: this.opts.timeoutMs ?? ISSUER_FETCH_TIMEOUT_MS,
              maxBytes: this.opts.maxBytes ?? ISSUER_DOC_MAX_BYTES,
            })
          ).toString('utf8'),
        ) as unknown;
      } catch (e) {
        throw new IssuerUnavailable(e instanceof FetchFailed ? e.message : 'not JSON');
      }
    };
    const config = await get(discoveryUrl(issuer));
    const jwksUri = (config as { jwks_uri?: unknown } | null)?.jwks_uri;
    if (typeof jwksUri !== 'string') throw new IssuerUnavailable('no jwks_uri');
    const jwks = await get(jwksUri);
    try {
      return createLocalJWKSet(jwks as JSONWebKeySet);
    } catch {
      throw new IssuerUnavailable('malformed JWKS');
    }
  }
}
