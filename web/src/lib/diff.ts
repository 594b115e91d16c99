import type { Variable } from '@svcenv/contract';
import type { DiffResponse } from '../types.js';

/** `sameByRef`: the stored text differs, the pulled value does not (`${dev.DB_HOST}` beside `db2.internal`). */
export type DiffStatus = 'onlyA' | 'onlyB' | 'different' | 'sameByRef' | 'same';
export interface DiffRow {
  key: string;
  status: DiffStatus;
  a: Variable | undefined;
  b: Variable | undefined;
}

/**
 * Rows for the side-by-side comparison of two environments: the server's verdict decides the status (it
 * compares what a pull of each gives, references resolved and secrets included, ADR 0026); the listings only
 * supply what is shown beside it.
 */
export function diffRows(diff: DiffResponse, a: Variable[], b: Variable[]): DiffRow[] {
  const byKeyA = new Map(a.map((v) => [v.key, v]));
  const byKeyB = new Map(b.map((v) => [v.key, v]));
  const onlyA = new Set(diff.onlyInA);
  const onlyB = new Set(diff.onlyInB);
  const different = new Set(diff.different);
  const byRef = new Set(diff.sameByReference);
  const keys = new Set([...byKeyA.keys(), ...byKeyB.keys(), ...onlyA, ...onlyB, ...different]);
  const rows: DiffRow[] = [...keys].map((key) => ({
    key,
    status: onlyA.has(key)
      ? 'onlyA'
      : onlyB.has(key)
        ? 'onlyB'
        : different.has(key)
          ? 'different'
          : byRef.has(key)
            ? 'sameByRef'
            : 'same',
    a: byKeyA.get(key),
    b: byKeyB.get(key),
  }));
  const order: Record<DiffStatus, number> = { different: 0, onlyA: 1, onlyB: 2, sameByRef: 3, same: 4 };
  return rows.sort((x, y) => order[x.status] - order[y.status] || x.key.localeCompare(y.key));
}

export function diffSummary(rows: DiffRow[]): Record<DiffStatus, number> {
  const out: Record<DiffStatus, number> = { onlyA: 0, onlyB: 0, different: 0, sameByRef: 0, same: 0 };
  for (const r of rows) out[r.status]++;
  return out;
}
