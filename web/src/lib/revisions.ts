/**
 * Pure logic of the revision timeline (D44) and the rollback preview (D45): what a revision's action means
 * in words, and what rolling back would change, computed from two listings the way the server decides.
 */
import type { Variable } from '@svcenv/contract';
import { isMasked } from './mask.js';

/** The audit action behind a revision (D44), as a person would say it. */
const ACTIONS: Record<string, string> = {
  'vars.bulk_upsert': 'Saved variables',
  'var.update': 'Edited a variable',
  'var.delete': 'Deleted a variable',
  'vars.bulk_delete': 'Deleted variables',
  'var.restore': 'Restored an earlier version',
  'env.rollback': 'Rolled back',
  'change_request.approve': 'Applied a change request',
};

/** An action the dashboard does not know yet still reads as something: the server's own name for it. */
export const actionLabel = (action: string): string => ACTIONS[action] ?? action;

export interface RollbackChange {
  key: string;
  /** The variable now (absent for a key the rollback creates). */
  current?: Variable;
  /** The variable at the target revision, which the rollback restores (absent for a key it deletes). */
  restored?: Variable;
  /**
   * Both values are masked secrets written since the target revision: the listings cannot tell whether the
   * value is the same again. The server compares the real values and leaves an equal one alone.
   */
  unsure?: boolean;
}

export interface RollbackDiff {
  create: RollbackChange[];
  update: RollbackChange[];
  delete: RollbackChange[];
}

/**
 * What `POST .../rollback` would do to the environment whose variables are `now` to bring back `then`, by
 * the server's rule (D45): a key that differs in type, expiry or value is restored, a key missing now is
 * created, a key that did not exist then is deleted. A masked secret's value is unknown; one whose
 * version is the same on both sides (same `updatedAt`, the time of its history entry) is the same value.
 */
export function rollbackDiff(now: Variable[], then: Variable[]): RollbackDiff {
  const nowByKey = new Map(now.map((v) => [v.key, v]));
  const thenKeys = new Set(then.map((v) => v.key));
  const diff: RollbackDiff = { create: [], update: [], delete: [] };
  for (const t of then) {
    const n = nowByKey.get(t.key);
    if (!n) {
      diff.create.push({ key: t.key, restored: t });
      continue;
    }
    if (n.type !== t.type || n.expiresAt !== t.expiresAt) {
      diff.update.push({ key: t.key, current: n, restored: t });
      continue;
    }
    const hidden = isMasked(n.value) || isMasked(t.value);
    if (!hidden) {
      if (n.value !== t.value) diff.update.push({ key: t.key, current: n, restored: t });
    } else if (n.updatedAt !== t.updatedAt) {
      diff.update.push({ key: t.key, current: n, restored: t, unsure: true });
    }
  }
  for (const n of now) if (!thenKeys.has(n.key)) diff.delete.push({ key: n.key, current: n });
  const byKey = (a: RollbackChange, b: RollbackChange) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  diff.create.sort(byKey);
  diff.update.sort(byKey);
  diff.delete.sort(byKey);
  return diff;
}

export const diffSize = (d: RollbackDiff): number => d.create.length + d.update.length + d.delete.length;
