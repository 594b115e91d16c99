/**
 * D71's leases as `svcenv run` and `svcenv lease` hold them (ADR 0030): made through the zod-free endpoint
 * table (run's start-up stays without zod, ADR 0001-cli), renewed at two thirds of their TTL, revoked on
 * every exit `run` sees. A lease's values are never printed here; only names, ids and times.
 */
import { endpoints } from '@svcenv/contract/endpoints';
import { type Api, ApiError } from './api.js';
import { CliError } from './errors.js';

/** A dynamic secret as `run` needs it: its name and the variables its leases fill. */
export interface Declaration {
  name: string;
  /** Variable names a lease gives (value name → variable name, D71 `keys`). */
  keys: string[];
}

export interface Lease {
  name: string;
  id: string;
  username: string;
  expiresAt: Date;
  maxExpiresAt: Date;
  values: Record<string, string>;
}

type Target = { project: string; env: string };

/** GET .../dynamic: the environment's dynamic secrets (D71), by name and variable names. */
export async function listDeclarations(api: Api, t: Target): Promise<Declaration[]> {
  const res = await api.fetch(endpoints.listDynamicSecrets, { params: { id: t.project, env: t.env } });
  const body = (await res.json().catch(() => undefined)) as
    | { dynamicSecrets?: { name?: unknown; keys?: unknown }[] }
    | undefined;
  if (!Array.isArray(body?.dynamicSecrets)) throw unexpected(endpoints.listDynamicSecrets.path);
  return body.dynamicSecrets.map((d) => {
    if (typeof d.name !== 'string' || typeof d.keys !== 'object' || d.keys === null) {
      throw unexpected(endpoints.listDynamicSecrets.path);
    }
    return { name: d.name, keys: Object.values(d.keys as Record<string, string>).map(String) };
  });
}

const unexpected = (path: string) =>
  new CliError('SERVER', `unexpected response from ${path}`, 'is the API URL a svcenv server of a matching version?');

/**
 * POST .../dynamic/:name/leases. A refusal becomes one line naming the dynamic secret and the server's reason
 * (a managed database that is away: `UPSTREAM_FAILED: cannot lease the dynamic secret db: ...`).
 */
export async function createLease(api: Api, t: Target, name: string, ttlSeconds?: number): Promise<Lease> {
  let res: Response;
  try {
    res = await api.fetch(endpoints.createLease, {
      params: { id: t.project, env: t.env, name },
      body: ttlSeconds === undefined ? {} : { ttlSeconds },
    });
  } catch (err) {
    if (err instanceof CliError) {
      throw new CliError(err.code, `cannot lease the dynamic secret ${name}: ${err.message}`, err.hint);
    }
    throw err;
  }
  const b = (await res.json().catch(() => undefined)) as Partial<Record<keyof Lease, unknown>> | undefined;
  if (
    typeof b?.id !== 'string' ||
    typeof b.expiresAt !== 'string' ||
    typeof b.maxExpiresAt !== 'string' ||
    typeof b.values !== 'object' ||
    b.values === null
  ) {
    throw unexpected(endpoints.createLease.path);
  }
  return {
    name,
    id: b.id,
    username: String(b.username ?? ''),
    expiresAt: new Date(b.expiresAt),
    maxExpiresAt: new Date(b.maxExpiresAt),
    values: b.values as Record<string, string>,
  };
}

/** POST .../leases/:id/renew: the new expiry (the server caps it at maxExpiresAt, D71). */
export async function renewLease(api: Api, t: Target, lease: Lease, ttlSeconds?: number): Promise<Date> {
  const res = await api.fetch(endpoints.renewLease, {
    params: { id: t.project, env: t.env, name: lease.name, leaseId: lease.id },
    body: ttlSeconds === undefined ? {} : { ttlSeconds },
  });
  const b = (await res.json().catch(() => undefined)) as { expiresAt?: unknown } | undefined;
  if (typeof b?.expiresAt !== 'string') throw unexpected(endpoints.renewLease.path);
  return new Date(b.expiresAt);
}

/** DELETE .../leases/:id; a lease already gone (404) counts as revoked. */
export async function revokeLease(api: Api, t: Target, lease: Pick<Lease, 'name' | 'id'>): Promise<void> {
  try {
    await api.fetch(endpoints.revokeLease, {
      params: { id: t.project, env: t.env, name: lease.name, leaseId: lease.id },
      timeoutMs: 15_000,
    });
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return;
    throw err;
  }
}

/** Renewal comes at two thirds of the time left (D71), and not closer than this to the expiry. */
const MIN_RENEW_DELAY_MS = 1_000;

/**
 * The leases of one `run`: made before the command starts, renewed while it runs, revoked when it ends.
 * Every lease it made is revoked by `revokeAll`, also one whose creation was answered after the command was
 * told to stop.
 */
export class RunLeases {
  readonly leases: Lease[] = [];
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private revoked: Promise<void> | undefined;
  /** Lease ids already said to be beyond renewal (said once each). */
  private readonly capped = new Set<string>();

  constructor(
    private readonly api: Api,
    private readonly target: Target,
    private readonly note: (line: string) => void,
    private readonly ttlSeconds?: number,
  ) {}

  /** One lease of each declaration, made together; if one fails, those made are revoked and the error stands. */
  async acquire(declarations: readonly Declaration[]): Promise<void> {
    const made = await Promise.allSettled(
      declarations.map(async (d) => {
        const lease = await createLease(this.api, this.target, d.name, this.ttlSeconds);
        this.leases.push(lease);
        return lease;
      }),
    );
    const failed = made.find((m) => m.status === 'rejected');
    if (failed) {
      await this.revokeAll();
      throw (failed as PromiseRejectedResult).reason;
    }
  }

  /** The leased variables, in declaration order of the answers. */
  values(): Map<string, string> {
    const out = new Map<string, string>();
    for (const l of this.leases) for (const [k, v] of Object.entries(l.values)) out.set(k, v);
    return out;
  }

  /** Schedules every lease's renewal at two thirds of its TTL, again after each renewal. */
  startRenewing(): void {
    for (const l of this.leases) this.schedule(l);
  }

  private schedule(lease: Lease): void {
    if (this.revoked) return;
    const left = lease.expiresAt.getTime() - Date.now();
    if (lease.expiresAt.getTime() >= lease.maxExpiresAt.getTime()) {
      this.beyondRenewal(lease);
      return;
    }
    const delay = Math.max(MIN_RENEW_DELAY_MS, Math.floor((left * 2) / 3));
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.renew(lease);
    }, delay);
    // The command's exit, not a pending renewal, decides when svcenv exits.
    (timer as { unref?: () => void }).unref?.();
    this.timers.add(timer);
  }

  private async renew(lease: Lease): Promise<void> {
    if (this.revoked) return;
    const before = lease.expiresAt.getTime();
    try {
      lease.expiresAt = await renewLease(this.api, this.target, lease, this.ttlSeconds);
    } catch (err) {
      if (this.revoked) return;
      const e = err as CliError;
      const left = lease.expiresAt.getTime() - Date.now();
      if (left <= MIN_RENEW_DELAY_MS) {
        this.note(
          `svcenv: the lease of ${lease.name} could not be renewed (${e.code ?? 'error'}: ${e.message}); it has expired`,
        );
        return;
      }
      // Once per failure streak would be kinder, but a failed renewal is rare and each retry is a third apart.
      this.note(
        `svcenv: the lease of ${lease.name} could not be renewed (${e.code ?? 'error'}: ${e.message}); retrying before ${lease.expiresAt.toISOString()}`,
      );
      this.schedule(lease);
      return;
    }
    if (lease.expiresAt.getTime() <= before) {
      this.beyondRenewal(lease);
      return;
    }
    this.schedule(lease);
  }

  private beyondRenewal(lease: Lease): void {
    if (this.capped.has(lease.id)) return;
    this.capped.add(lease.id);
    this.note(
      `svcenv: the lease of ${lease.name} cannot be renewed past its maximum TTL; it expires at ${lease.maxExpiresAt.toISOString()}`,
    );
  }

  /** Stops renewing and revokes every lease (once, however often it is called); a failure is said, not thrown. */
  revokeAll(): Promise<void> {
    this.revoked ??= (async () => {
      for (const t of this.timers) clearTimeout(t);
      this.timers.clear();
      await Promise.all(
        this.leases.map((l) =>
          revokeLease(this.api, this.target, l).catch((err: unknown) => {
            const e = err as CliError;
            this.note(
              `svcenv: the lease ${l.id} of ${l.name} could not be revoked (${e.code ?? 'error'}: ${e.message}); the server revokes it when it expires (${l.expiresAt.toISOString()})`,
            );
          }),
        ),
      );
    })();
    return this.revoked;
  }
}
