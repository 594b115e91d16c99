import type { Db } from '../db/index.js';

/**
 * A periodic task that must run on one instance at a time (guide convention 10): the instance that takes the
 * task's row in `task_leases` runs it until `until`. One conditional upsert: it takes a free or lapsed lease,
 * or renews the one this instance already holds, so a task that runs every few seconds stays where it runs
 * while that instance lives, and moves to another within `leaseMs` once it dies.
 */
export async function claimTaskLease(
  db: Db,
  name: string,
  holder: string,
  now: Date,
  leaseMs: number,
): Promise<boolean> {
  const nowIso = now.toISOString();
  const until = new Date(now.getTime() + leaseMs).toISOString();
  const row = await db
    .insertInto('task_leases')
    .values({ name, holder, until })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ holder, until })
        .where((eb) => eb.or([eb('task_leases.until', '<=', nowIso), eb('task_leases.holder', '=', holder)])),
    )
    .returning('holder')
    .executeTakeFirst();
  return row?.holder === holder;
}
