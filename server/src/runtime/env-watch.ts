import type { FastifyBaseLogger } from 'fastify';
import { readEpoch } from '../db/epoch-cache.js';
import type { Db, Dialect } from '../db/index.js';
import { listenForRevisions } from '../db/notify.js';

/**
 * D43: held pulls wait here for their environment to change. A waiter remembers the revisions its answer was
 * rendered at, of the environment pulled and of every other one its references read (D49), and is woken when
 * any of them moves on:
 *   - on PostgreSQL by NOTIFY, which every write sends in its own transaction (services/core/changes.ts), so the
 *     held pulls of every instance wake when the change commits; a poll of the watched revisions each second
 *     covers a lost notification;
 *   - on SQLite (one instance) by a poll of the epoch counter every 50 ms (db/epoch-cache.ts: any write to the
 *     environments table bumps it), which reads the watched revisions only when it moved.
 * Waking means "look again": the pull is rendered anew and answered only if its body changed (never a stale
 * 304), else it goes on waiting until its deadline. Bounded: at most `maxHeld` held pulls per instance and
 * `maxPerToken` per access token; beyond, a pull answers at once. Draining answers every held pull at once.
 */
export type WakeReason = 'changed' | 'timeout' | 'drain';

interface Waiter {
  /** Environment id → the revision the answer was rendered at. */
  envs: ReadonlyMap<string, number>;
  /** D75: the pulled environment's override counter the answer was rendered at (ADR 0031). */
  overrides: { envId: string; rev: number } | undefined;
  tokenId: string;
  wake(reason: WakeReason): void;
}

export class EnvWatch {
  private readonly byEnv = new Map<string, Set<Waiter>>();
  private readonly perToken = new Map<string, number>();
  private held = 0;
  private draining = false;
  private timer: NodeJS.Timeout | null = null;
  private lastEpoch: number | undefined;
  private polling = false;
  private stopListening: (() => Promise<void>) | null = null;

  constructor(
    private readonly opts: {
      db: Db;
      dialect: Dialect;
      databaseUrl?: string | undefined;
      log: FastifyBaseLogger;
      maxHeld: number;
      maxPerToken: number;
    },
  ) {}

  /** How many pulls are held now (D52 metrics). */
  get size(): number {
    return this.held;
  }

  async start(): Promise<void> {
    if (this.opts.dialect === 'postgres' && this.opts.databaseUrl) {
      this.stopListening = await listenForRevisions(this.opts.databaseUrl, this.opts.log, (envId) =>
        this.wakeEnv(envId, null),
      );
    }
  }

  /**
   * Holds until the revision of one of `envs` (environment id → revision) differs, `ms` pass, or the server
   * drains. Answers null at once when the pull may not be held (limits, draining): the caller then answers
   * as it is. One held pull counts once, however many environments it watches.
   */
  wait(
    envs: ReadonlyMap<string, number>,
    tokenId: string,
    ms: number,
    /** D75: also wake when this environment's override counter moves (someone's override changed). */
    overrides?: { envId: string; rev: number },
  ): Promise<WakeReason> | null {
    if (this.draining || this.held >= this.opts.maxHeld) return null;
    const mine = this.perToken.get(tokenId) ?? 0;
    if (mine >= this.opts.maxPerToken) return null;
    return new Promise<WakeReason>((resolve) => {
      const waiter: Waiter = {
        envs,
        overrides,
        tokenId,
        wake: (reason) => {
          clearTimeout(timeout);
          this.remove(waiter);
          resolve(reason);
        },
      };
      const timeout = setTimeout(() => waiter.wake('timeout'), ms);
      for (const envId of envs.keys()) {
        let set = this.byEnv.get(envId);
        if (!set) {
          set = new Set();
          this.byEnv.set(envId, set);
        }
        set.add(waiter);
      }
      this.held++;
      this.perToken.set(tokenId, mine + 1);
      this.ensurePolling();
    });
  }

  /** Draining: every held pull is answered now (304 unless its body changed), and none is held again. */
  drain(): void {
    this.draining = true;
    for (const set of [...this.byEnv.values()]) for (const w of [...set]) w.wake('drain');
  }

  async stop(): Promise<void> {
    this.drain();
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.stopListening?.();
  }

  private remove(w: Waiter): void {
    let found = false;
    for (const envId of w.envs.keys()) {
      const set = this.byEnv.get(envId);
      if (!set?.delete(w)) continue;
      found = true;
      if (set.size === 0) this.byEnv.delete(envId);
    }
    if (!found) return;
    this.held--;
    const n = (this.perToken.get(w.tokenId) ?? 1) - 1;
    if (n <= 0) this.perToken.delete(w.tokenId);
    else this.perToken.set(w.tokenId, n);
    if (this.held === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /**
   * Wakes the waiters of `envId` whose revision is not `revision`, or whose override counter of it is not
   * `overrideRev` (D75: a person's override changed; each looks again and answers only if its own body
   * changed); null: all of them.
   */
  private wakeEnv(envId: string, revision: number | null, overrideRev?: number): void {
    const set = this.byEnv.get(envId);
    if (!set) return;
    for (const w of [...set]) {
      const moved =
        revision === null ||
        w.envs.get(envId) !== revision ||
        (overrideRev !== undefined && w.overrides?.envId === envId && w.overrides.rev !== overrideRev);
      if (moved) w.wake('changed');
    }
  }

  private ensurePolling(): void {
    if (this.timer) return;
    const sqlite = this.opts.dialect === 'sqlite';
    this.timer = setInterval(() => void this.poll(sqlite), sqlite ? 50 : 1000);
    this.timer.unref();
  }

  private async poll(sqlite: boolean): Promise<void> {
    if (this.polling || this.byEnv.size === 0) return;
    if (sqlite) {
      // One single-row read; the revisions are read only when something was written.
      const epoch = readEpoch(this.opts.db);
      if (epoch !== undefined && epoch === this.lastEpoch) return;
      this.lastEpoch = epoch;
    }
    this.polling = true;
    try {
      const ids = [...this.byEnv.keys()];
      for (let i = 0; i < ids.length; i += 500) {
        const rows = await this.opts.db
          .selectFrom('environments')
          .select(['id', 'revision', 'override_rev'])
          .where('id', 'in', ids.slice(i, i + 500))
          .execute();
        const found = new Set(rows.map((r) => r.id));
        for (const r of rows) this.wakeEnv(r.id, Number(r.revision), Number(r.override_rev));
        // A deleted environment: its held pulls look again (and get 404).
        for (const id of ids.slice(i, i + 500)) if (!found.has(id)) this.wakeEnv(id, null);
      }
    } catch (e) {
      this.opts.log.warn({ err: e }, 'long-poll revision check failed; retrying');
    } finally {
      this.polling = false;
    }
  }
}
