import type { Clock } from '../lib/clock.js';
import { FetchFailed, fetchGuarded, type Resolver } from '../lib/net-guard.js';
import { discoveryUrl, ISSUER_DOC_MAX_BYTES, ISSUER_FETCH_TIMEOUT_MS } from './issuer-keys.js';

/**
 * D63: the OpenID Connect discovery documents of single sign-on issuers, per process. Fetched on D5's rules
 * (lib/net-guard.ts) within 5 s and 256 KiB, like the D60 issuers' (runtime/issuer-keys.ts, which keeps the
 * keys of both), coalesced, kept 10 minutes; after a failure with nothing cached, sign-ins fail fast for 10 s.
 */
const FRESH_MS = 10 * 60_000;
const FAILURE_BACKOFF_MS = 10_000;
const MAX_ISSUERS = 1_000;

/** The fields a code flow needs (OpenID Connect Discovery 1.0, section 3). */
export interface DiscoveryDocument {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  responseTypes: string[];
  /**
   * PKCE methods the document lists; null when it lists none (Microsoft Entra ID says nothing and supports
   * S256): a sign-in sends S256 all the same (ADR 0025).
   */
  codeChallengeMethods: string[] | null;
}

/** Why a document could not be had; the message names no URL. */
export class DiscoveryFailed extends Error {}

export interface OidcDiscoveryOptions {
  clock: Clock;
  allowPrivate: boolean;
  resolve: Resolver;
  timeoutMs?: number;
  maxBytes?: number;
}

interface Entry {
  doc: DiscoveryDocument | null;
  fetchedAt: number;
  failedAt: number;
  inflight: Promise<DiscoveryDocument> | null;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []);

export class OidcDiscovery {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly opts: OidcDiscoveryOptions) {}

  /** The issuer's document, cached or fetched once for everyone waiting. Throws DiscoveryFailed. */
  async document(issuer: string): Promise<DiscoveryDocument> {
    const now = this.opts.clock.now().getTime();
    let e = this.entries.get(issuer);
    if (!e) {
      if (this.entries.size >= MAX_ISSUERS) this.entries.delete(this.entries.keys().next().value as string);
      e = { doc: null, fetchedAt: 0, failedAt: 0, inflight: null };
      this.entries.set(issuer, e);
    }
    if (e.doc && now - e.fetchedAt < FRESH_MS) return e.doc;
    if (e.inflight) return e.inflight;
    if (!e.doc && now - e.failedAt < FAILURE_BACKOFF_MS) throw new DiscoveryFailed('the issuer failed recently');
    const entry = e;
    const p = this.fetch(issuer).then(
      (doc) => {
        entry.doc = doc;
        entry.fetchedAt = this.opts.clock.now().getTime();
        entry.inflight = null;
        return doc;
      },
      (err: unknown) => {
        entry.failedAt = this.opts.clock.now().getTime();
        entry.inflight = null;
        // A brief outage: the document held before keeps serving (endpoints rarely move).
        if (entry.doc) return entry.doc;
        throw err;
      },
    );
    entry.inflight = p;
    return p;
  }

  /** A fresh fetch, bypassing the cache (the connection test must see what the issuer says now). */
  async fetch(issuer: string): Promise<DiscoveryDocument> {
    const raw = (await this.json(discoveryUrl(issuer))) as Record<string, unknown> | null;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new DiscoveryFailed('not a JSON object');
    const text = (k: string) => (typeof raw[k] === 'string' ? (raw[k] as string) : '');
    return {
      issuer: text('issuer'),
      authorizationEndpoint: text('authorization_endpoint'),
      tokenEndpoint: text('token_endpoint'),
      jwksUri: text('jwks_uri'),
      responseTypes: strings(raw.response_types_supported),
      codeChallengeMethods:
        raw.code_challenge_methods_supported === undefined ? null : strings(raw.code_challenge_methods_supported),
    };
  }

  /** A JSON document on D5's rules; DiscoveryFailed with a short reason otherwise. */
  async json(url: string): Promise<unknown> {
    try {
      return JSON.parse((await fetchGuarded(url, this.guard())).toString('utf8')) as unknown;
    } catch (e) {
      throw new DiscoveryFailed(e instanceof FetchFailed ? e.message : 'not JSON');
    }
  }

  /** A form POST (the token request) on D5's rules: the JSON answer, or FetchFailed. */
  async postForm(url: string, form: URLSearchParams, headers: Record<string, string>): Promise<unknown> {
    const body = await fetchGuarded(url, {
      ...this.guard(),
      post: { body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } },
    });
    try {
      return JSON.parse(body.toString('utf8')) as unknown;
    } catch {
      throw new FetchFailed('not JSON');
    }
  }

  private guard() {
    return {
      allowPrivate: this.opts.allowPrivate,
      resolve: this.opts.resolve,
      timeoutMs: this.opts.timeoutMs ?? ISSUER_FETCH_TIMEOUT_MS,
      maxBytes: this.opts.maxBytes ?? ISSUER_DOC_MAX_BYTES,
    };
  }
}
