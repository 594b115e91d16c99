import { randomUUID } from 'node:crypto';
import { claimTaskLease } from '../../jobs/task-lease.js';
import type { Deps } from '../core/deps.js';
import { revokeDueLeases } from './leases.js';
import { rotateDue } from './rotations.js';

/**
 * The two background tasks of D71 and D72, on every instance's job runner, each run by one instance at a time
 * (a task lease): the lease revocations every few seconds, so a lease is revoked well within D71's 60 s of
 * its expiry, and the rotations. Each keeps its intent in its own rows (leases, rotations), so a restart
 * loses nothing: the next run, on whichever instance, finds it.
 */
export const LEASE_SWEEP_MS = 5_000;
export const ROTATION_SWEEP_MS = 10_000;

export function registerCredentialJobs(deps: Deps, log: { error(o: object, msg: string): void }): void {
  const holder = randomUUID();
  const task = (name: string, everyMs: number, run: () => Promise<number>) =>
    deps.jobs.every(
      name,
      everyMs,
      async () => {
        // Held a little longer than the period, so that this instance keeps it while it lives.
        if (!(await claimTaskLease(deps.db, name, holder, deps.clock.now(), everyMs * 6))) return;
        await run().catch((e: unknown) => log.error({ err: e, task: name }, 'credential task failed'));
      },
      // They wait on other databases, never on a slot of the runner's share of ours.
      { ungated: true },
    );
  task('lease-revocations', LEASE_SWEEP_MS, () => revokeDueLeases(deps));
  task('rotations', ROTATION_SWEEP_MS, () => rotateDue(deps));
}
