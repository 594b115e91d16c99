import type { Db } from '../db/index.js';

/** D66: an unchanged pull of one credential, environment and revision is audited once per this long. */
export const UNCHANGED_PULL_AUDIT_MS = 3_600_000;

/** What D66 counts unchanged pulls by. */
export interface PullTriple {
  /** The audit actor: the access token's id. */
  credentialId: string;
  envId: string;
  revision: number;
}

const keyOf = (t: PullTriple) => `${t.credentialId}|${t.envId}|${t.revision}`;

/**
 * D66 across instances. The database decides who audits a triple's hour (the `unchanged_pull_audits` row,
 * claimed by one INSERT ... ON CONFLICT DO UPDATE ... WHERE the row is an hour old, in the same transaction
 * as the audit entry: of two instances answering at once, the second waits for the first's commit and then
 * finds the row fresh). In front of it, this process remembers when each triple it has seen was last
 * audited, by itself or by another instance, so a `run --watch` fleet's 304s within the hour cost a map
 * look-up, not a database round trip or a commit.
 */
export class UnchangedPullAudits {
  /** Triple → when it was last audited (ms), by any instance. */
  private readonly audited = new Map<string, number>();
  /** When this process last deleted stale rows, and stale memory (ms). */
  private lastSweep = 0;
  private lastForget = 0;

  constructor(
    /** Bound on remembered triples; past it, forgetting costs a database check, never a second entry. */
    private readonly max = 100_000,
  ) {}

  /** True when the triple is known to have been audited less than an hour before `now`. */
  recent(t: PullTriple, now: number): boolean {
    const at = this.audited.get(keyOf(t));
    return at !== undefined && now - at < UNCHANGED_PULL_AUDIT_MS;
  }

  /**
   * Claims the triple's hour in `trx`: `claimed` when this caller must write the audit entry, in the same
   * transaction; otherwise `at` is when another request (of any instance) audited it. Once an hour per
   * process it also deletes the rows that no longer mean anything.
   */
  async claim(trx: Db, t: PullTriple, now: Date): Promise<{ claimed: boolean; at: number }> {
    const cutoff = new Date(now.getTime() - UNCHANGED_PULL_AUDIT_MS).toISOString();
    if (now.getTime() - this.lastSweep >= UNCHANGED_PULL_AUDIT_MS) {
      this.lastSweep = now.getTime();
      await trx.deleteFrom('unchanged_pull_audits').where('audited_at', '<', cutoff).execute();
    }
    const won = await trx
      .insertInto('unchanged_pull_audits')
      .values({
        credential_id: t.credentialId,
        environment_id: t.envId,
        revision: t.revision,
        audited_at: now.toISOString(),
      })
      .onConflict((oc) =>
        oc
          .columns(['credential_id', 'environment_id', 'revision'])
          .doUpdateSet({ audited_at: now.toISOString() })
          .where('unchanged_pull_audits.audited_at', '<=', cutoff),
      )
      .returning('audited_at')
      .executeTakeFirst();
    if (won) return { claimed: true, at: now.getTime() };
    const row = await trx
      .selectFrom('unchanged_pull_audits')
      .select('audited_at')
      .where('credential_id', '=', t.credentialId)
      .where('environment_id', '=', t.envId)
      .where('revision', '=', t.revision)
      .executeTakeFirst();
    return { claimed: false, at: row ? Date.parse(row.audited_at) : now.getTime() };
  }

  /** Called after the claim's transaction committed (a rolled-back claim is not remembered). */
  remember(t: PullTriple, at: number, now: number): void {
    if (this.audited.size >= this.max || now - this.lastForget >= UNCHANGED_PULL_AUDIT_MS) {
      this.lastForget = now;
      for (const [k, v] of this.audited) if (now - v >= UNCHANGED_PULL_AUDIT_MS) this.audited.delete(k);
      if (this.audited.size >= this.max) this.audited.clear();
    }
    this.audited.set(keyOf(t), at);
  }
}
