import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Db } from '../db/index.js';
import type { Clock } from '../lib/clock.js';
import { pinnedLookup, type Resolver, resolveTarget, TargetRefused, urlHost } from '../lib/net-guard.js';
import { openWebhookSecret, signWebhookBody } from '../lib/webhook-signing.js';
import { FinalJobError, type JobKind } from './queue.js';

/**
 * Webhook deliveries as durable jobs (D35): written in the transaction of the change that caused them,
 * sent off the request path, retried on a timeout, a network error, 429 or 5xx up to 5 attempts in all
 * (about 30 s, 2 min, 10 min, 1 h apart), final on any other answer. Every attempt is recorded.
 */
export const WEBHOOK_JOB = 'webhook.deliver';
export const WEBHOOK_TIMEOUT_MS = 10_000;
export const WEBHOOK_MAX_ATTEMPTS = 5;
/**
 * Attempts to one webhook in flight at once on an instance (its lane, jobs/queue.ts; ADR 0010). A hanging
 * target then holds 4 of the runner's slots for its 10 s, and the other webhooks' deliveries go on around it.
 */
export const WEBHOOK_LANE_LIMIT = 4;
const BACKOFF_MS = [30_000, 120_000, 600_000, 3_600_000];

/** What the job row holds (sealed by the queue); the body is built and signed anew at each attempt. */
export interface DeliveryPayload {
  webhookId: string;
  /** X-Svcenv-Delivery: the same on every attempt, so receivers can de-duplicate. */
  deliveryId: string;
  event: string;
  projectId: string | null;
  env: string | null;
  actor: string;
  keys: string[];
  created: string[];
  updated: string[];
  /** access.* events only (ADR 0027): the request's who, what and why, beside the eight D34 fields. */
  access?: Record<string, unknown>;
}

export interface WebhookJobDeps {
  db: Db;
  clock: Clock;
  /** Key that seals webhook secrets (derived from the master key). */
  secretKey: Buffer;
  /** D5: WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  resolve: Resolver;
  timeoutMs?: number;
}

export interface SendResult {
  /** HTTP status, or 0 when no response came. */
  status: number;
  /** Our own short reason for status 0 (never a URL, a header or a body). */
  error: string | null;
  durationMs: number;
  /** A refused target: trying again cannot help. */
  refused: boolean;
}

/**
 * One POST to the webhook's URL. The host is resolved and checked here (D5), and the socket connects to
 * the checked address through a fixed `lookup`, so the address used is the address checked. Redirects
 * are not followed (node's http client never follows them); the response body is not read beyond need.
 */
export async function sendWebhook(opts: {
  url: string;
  body: string;
  headers: Record<string, string>;
  allowPrivate: boolean;
  resolve: Resolver;
  timeoutMs: number;
}): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = new URL(opts.url);
  } catch {
    return { status: 0, error: 'invalid url', durationMs: 0, refused: true };
  }
  if (url.protocol !== 'https:' && !(opts.allowPrivate && url.protocol === 'http:')) {
    return { status: 0, error: 'target refused: https is required', durationMs: 0, refused: true };
  }
  const host = urlHost(url);
  // The whole attempt, DNS included, has the 10-second budget (spec delivery rule 3).
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), opts.timeoutMs);
  });
  let target: { address: string; family: 4 | 6 };
  try {
    const addresses = await Promise.race([resolveTarget(host, opts.allowPrivate, opts.resolve), deadline]);
    target = addresses[0]!;
  } catch (e) {
    clearTimeout(timer);
    if (e instanceof TargetRefused)
      return { status: 0, error: 'target refused: private address', durationMs: elapsed(), refused: true };
    const reason = e instanceof Error && e.message === 'timeout' ? 'timeout' : `dns error ${errorCode(e)}`;
    return { status: 0, error: reason, durationMs: elapsed(), refused: false };
  }
  const lookup = pinnedLookup(target);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (r: Omit<SendResult, 'durationMs' | 'refused'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, durationMs: elapsed(), refused: false });
    };
    const req = send({
      protocol: url.protocol,
      hostname: host,
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: { ...opts.headers, 'content-length': String(Buffer.byteLength(opts.body)) },
      agent: false,
      lookup,
      ...(isIP(host) ? {} : { servername: host }),
    });
    deadline.catch(() => {
      req.destroy(new Error('timeout'));
      finish({ status: 0, error: 'timeout' });
    });
    req.on('response', (res) => {
      finish({ status: res.statusCode ?? 0, error: null });
      // The answer's body is of no use; drop the connection rather than wait for it.
      res.destroy();
    });
    req.on('error', (e) =>
      finish({ status: 0, error: e.message === 'timeout' ? 'timeout' : `network error ${errorCode(e)}` }),
    );
    req.end(opts.body);
  });
}

/** A system error code (ECONNREFUSED, ENOTFOUND, ...) without the message, which may name the host. */
function errorCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'unknown';
}

/** D35: a timeout, a network error, 429 or 5xx is worth another attempt; any other answer is final. */
export const retryable = (status: number): boolean => status === 0 || status === 429 || status >= 500;

/** Whether the webhook, as it is now, wants this event of this project (jobs/events.ts filters the same way). */
export function hears(
  hook: { active: number; events: string; project_id: string | null },
  event: string,
  projectId: string | null,
): boolean {
  if (hook.active !== 1 || !(JSON.parse(hook.events) as string[]).includes(event)) return false;
  return hook.project_id === null || hook.project_id === projectId;
}

export function webhookJob(deps: WebhookJobDeps): JobKind<DeliveryPayload> {
  const timeoutMs = deps.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  return {
    maxAttempts: WEBHOOK_MAX_ATTEMPTS,
    backoffMs: (attempt) => BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length) - 1] ?? BACKOFF_MS[0]!,
    lane: (p) => `webhook:${p.webhookId}`,
    laneLimit: WEBHOOK_LANE_LIMIT,
    async perform(p, { attempt, withDb }) {
      // Database work goes through the runner's share of the pool (withDb); the HTTP attempt holds no connection.
      const hook = await withDb(() =>
        deps.db.selectFrom('webhooks').selectAll().where('id', '=', p.webhookId).executeTakeFirst(),
      );
      // Deleted, deactivated, unsubscribed or limited to another project since the event: nothing to send (spec
      // delivery rule 5). A ping is an explicit request by an Owner and goes out regardless.
      if (!hook) return;
      if (p.event !== 'ping' && !hears(hook, p.event, p.projectId)) return;
      const secret = openWebhookSecret(deps.secretKey, hook.id, hook.secret_sealed);
      const now = deps.clock.now();
      // D34: all eight fields. `timestamp` is when this attempt was signed, so a receiver that refuses
      // deliveries older than 5 minutes still accepts a retry an hour later (ADR 0004).
      const body = JSON.stringify({
        event: p.event,
        projectId: p.projectId,
        env: p.env,
        actor: p.actor,
        keys: p.keys,
        created: p.created,
        updated: p.updated,
        timestamp: now.toISOString(),
        ...(p.access ? { access: p.access } : {}),
      });
      const result = await sendWebhook({
        url: hook.url,
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'svcenv-webhooks/1',
          'x-svcenv-signature': signWebhookBody(secret, body),
          'x-svcenv-delivery': p.deliveryId,
          'x-svcenv-event': p.event,
        },
        allowPrivate: deps.allowPrivate,
        resolve: deps.resolve,
        timeoutMs,
      });
      const at = deps.clock.now().toISOString();
      await withDb(() =>
        deps.db.transaction().execute(async (trx) => {
          await trx
            .insertInto('webhook_deliveries')
            .values({
              webhook_id: hook.id,
              delivery_id: p.deliveryId,
              event: p.event,
              attempt,
              status: result.status,
              duration_ms: result.durationMs,
              error: result.error,
              created_at: at,
            })
            .execute();
          // Spec delivery rule 4: the last attempt's status (0 without a response) and time. Attempts to one
          // webhook run side by side and may end out of order: an earlier one does not overwrite a later one.
          await trx
            .updateTable('webhooks')
            .set({ last_status: result.status, last_fired_at: at })
            .where('id', '=', hook.id)
            .where((eb) => eb.or([eb('last_fired_at', 'is', null), eb('last_fired_at', '<=', at)]))
            .execute();
        }),
      );
      if (result.status >= 200 && result.status < 300) return;
      const reason = result.error ?? `status ${result.status}`;
      if (result.refused || !retryable(result.status)) throw new FinalJobError(`webhook delivery failed: ${reason}`);
      throw new Error(`webhook delivery failed: ${reason}`);
    },
  };
}

/** Attempts are kept 30 days: enough to debug a receiver, bounded however busy the workspace. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
export async function pruneDeliveries(deps: { db: Db; clock: Clock }): Promise<void> {
  const before = new Date(deps.clock.now().getTime() - DELIVERY_RETENTION_MS).toISOString();
  await deps.db.deleteFrom('webhook_deliveries').where('created_at', '<', before).execute();
}
