/**
 * The Overview tab's comparison: every key across the environments, each cell missing, "set" (a masked secret,
 * not compared), or present with a value that is the same as or differs from the other visible values of the
 * key. Values compare as a pull gives them (ADR 0026): a `${...}` reference by its `resolvedValue`, anything
 * else by its `value`; a value whose text differs from the others' but that resolves to the same is "same
 * value, by reference", apart from identical. A masked value (a secret, or a reference that used one, D26) is
 * not compared.
 */
import type { Variable } from '@svcenv/contract';
import { isMasked } from './mask.js';

/** One environment's listing: its variables by key. */
export interface Listing {
  vars: Map<string, Variable>;
}

/**
 * `unknown`: the environment's listing did not load; `only`: the one environment that has the key (nothing to
 * compare); `byRef`: the same pulled value as the others, reached through a reference.
 */
export type CellState = 'missing' | 'set' | 'same' | 'byRef' | 'differs' | 'only' | 'unknown';
export interface Cell {
  state: CellState;
  variable?: Variable;
}
export interface OverviewRow {
  key: string;
  cells: Cell[];
  /**
   * `missing`: absent from at least one loaded environment; `differs`: two visible values differ; `set`: no
   * difference seen but a masked secret was not compared; `byRef`: every value visible and pulled alike, but
   * written differently (a reference); `same`: every value visible and identical.
   */
  status: 'same' | 'byRef' | 'differs' | 'missing' | 'set';
}

/**
 * What a pull hands over for this variable, as far as the listing shows it, as a string to compare; null when
 * it is not shown (masked, D26, or not decryptable). A value that does not resolve equals only the same text
 * failing to resolve.
 */
export function pulledValue(v: Variable): string | null {
  if (v.valueError) return null;
  if (v.resolveError !== undefined) return isMasked(v.value) ? null : `\u0000unresolved\u0000${v.value}`;
  const value = v.resolvedValue ?? v.value;
  return isMasked(value) ? null : value;
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
    const shown = found.filter((v): v is Variable => !!v && pulledValue(v) !== null);
    const differ = new Set(shown.map(pulledValue)).size > 1;
    // Pulled alike but written differently: the cells that reach the value through a reference say so.
    const byRef = !differ && new Set(shown.map((v) => v.value)).size > 1;
    // "same" needs another environment to be the same as: a key in one environment only is "only here".
    const present = found.filter((v) => !!v).length;
    const state = (v: Variable): CellState => {
      if (pulledValue(v) === null) return 'set';
      if (differ) return 'differs';
      if (present <= 1) return 'only';
      return byRef && v.resolvedValue !== undefined ? 'byRef' : 'same';
    };
    const cells: Cell[] = found.map((v) =>
      v === undefined ? { state: 'unknown' } : v === null ? { state: 'missing' } : { state: state(v), variable: v },
    );
    const status = cells.some((c) => c.state === 'missing')
      ? 'missing'
      : differ
        ? 'differs'
        : cells.some((c) => c.state === 'set')
          ? 'set'
          : byRef
            ? 'byRef'
            : 'same';
    return { key, cells, status };
  });
}
