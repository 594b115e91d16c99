/**
 * Plain constants of the wire contract, without zod: the CLI imports this module on its cold path
 * (ADR 0001-cli), the server and the dashboard through the package index.
 */

/** What a masked value reads as in listings, history and exports (spec variables rule 1, D26, D27). */
export const MASK = '***';

/**
 * D28a: the context variables a pull or export appends (unless `metadata=false`), in this order. They are
 * never stored, and a user variable of the same name wins.
 */
export const CONTEXT_KEYS = ['SVCENV_PROJECT', 'SVCENV_ENV', 'SVCENV_PROJECT_NAME'] as const;
export type ContextKey = (typeof CONTEXT_KEYS)[number];

/**
 * Spec "Events", D45, D47, D71 and D72: the event kinds a webhook can subscribe to, in the order the dashboard lists them.
 * Here, without zod, so that the dashboard imports the one list.
 */
export const WEBHOOK_EVENTS = [
  'var.update',
  'var.delete',
  'var.restore',
  'vars.bulk_upsert',
  'vars.bulk_delete',
  'vars.pull',
  'env.rollback',
  'change_request.open',
  'change_request.apply',
  // D72: a stored credential rotated (a new revision of its variable).
  'var.rotate',
  // D71: dynamic secrets' leases.
  'lease.create',
  'lease.renew',
  'lease.revoke',
  'lease.expire',
  'lease.revoke_failed',
  // D74: access requests, and D73's temporary grants ending.
  'access.request',
  'access.approve',
  'access.deny',
  'access.withdraw',
  'access.expire',
] as const;

/**
 * The events that read rather than change: a webhook hears them only when it names them. Pulls come from every
 * CI job and `run --watch` client, so a receiver subscribed by default would get a delivery per pull.
 */
export const WEBHOOK_READ_EVENTS = ['vars.pull'] as const satisfies readonly (typeof WEBHOOK_EVENTS)[number][];

/**
 * ADR 0004: what a webhook created without `events` subscribes to, and what the dashboard's form starts with:
 * every change event, that is every event but the reads, so an event added to the list above is in it the day it
 * is added.
 */
export const DEFAULT_WEBHOOK_EVENTS: readonly Exclude<
  (typeof WEBHOOK_EVENTS)[number],
  (typeof WEBHOOK_READ_EVENTS)[number]
>[] = WEBHOOK_EVENTS.filter(
  (e): e is Exclude<(typeof WEBHOOK_EVENTS)[number], (typeof WEBHOOK_READ_EVENTS)[number]> =>
    !(WEBHOOK_READ_EVENTS as readonly string[]).includes(e),
);

/**
 * The dashboard's script-readable sign of a session (ADR 0014): set to `1` beside the httpOnly session cookie,
 * cleared with it. It holds no secret; it spares a first visit without a session a request that answers 401.
 */
export const SIGNED_IN_COOKIE = 'svcenv_signed_in';

/** D60: an identity's token lives 60 s to 12 hours, 15 minutes by default. */
export const IDENTITY_TTL = { min: 60, max: 43_200, default: 900 } as const;
