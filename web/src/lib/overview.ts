/**
 * The Overview tab's comparison: every key across the environments, each cell missing, "set" (a masked secret,
 * not compared), or present with a value that is the same as or differs from the other visible values of the
 * key. Values compare as stored (a `${...}` reference is compared as written, not resolved).
 */
import type { Variable } from '@svcenv/contract';
import { isMasked } from './mask.js';

/** One environment's listing: its variables by key. */
export interface Listing {
  vars: Map<string, Variable>;
}

/** `unknown`: the environment's listing did not load; `only`: the one environment that has the key (nothing to compare). */
export type CellState = 'missing' | 'set' | 'same' | 'differs' | 'only' | 'unknown';
export interface Cell {
  state: CellState;
  variable?: Variable;
}
export interface OverviewRow {
  key: string;
  cells: Cell[];
  /**
   * `missing`: absent from at least one loaded environment; `differs`: two visible values differ; `set`: no
   * difference seen but a masked secret was not compared; `same`: every value visible and equal.
   */
  status: 'same' | 'differs' | 'missing' | 'set';
}

/** The rows, one per key in any listing, sorted by key; `cells` follow `envs`. */
export function overviewRows(envs: string[], listings: Map<string, Listing>): OverviewRow[] {
  const keys = new Set<string>();
  for (const env of envs) for (const k of listings.get(env)?.vars.keys() ?? []) keys.add(k);
  return [...keys].sort().map((key) => {
    const found = envs.map((env) => {
      const listing = listings.get(env);
      return listing ? (listing.vars.get(key) ?? null) : undefined;
    });
    const comparable = (v: Variable) => !isMasked(v.value) && !v.valueError;
    const visible = new Set(found.filter((v): v is Variable => !!v && comparable(v)).map((v) => v.value));
    const differ = visible.size > 1;
    // "same" needs another environment to be the same as: a key in one environment only is "only here".
    const present = found.filter((v) => !!v).length;
    const cells: Cell[] = found.map((v) =>
      v === undefined
        ? { state: 'unknown' }
        : v === null
          ? { state: 'missing' }
          : { state: comparable(v) ? (differ ? 'differs' : present > 1 ? 'same' : 'only') : 'set', variable: v },
    );
    const status = cells.some((c) => c.state === 'missing')
      ? 'missing'
      : differ
        ? 'differs'
        : cells.some((c) => c.state === 'set')
          ? 'set'
          : 'same';
    return { key, cells, status };
  });
}
