/**
 * The rollback preview (D45) computed in the browser: the same verdict the server reaches, from two
 * listings at fixed revisions, including masked secrets, whose values the listings do not show.
 */

import type { Variable } from '@svcenv/contract';
import { MASK } from '@svcenv/contract/constants';
import { describe, expect, it } from 'vitest';
import { actionLabel, diffSize, rollbackDiff } from '../src/lib/revisions.js';

const T1 = '2026-01-01T00:00:00.000Z';
const T2 = '2026-01-02T00:00:00.000Z';
const v = (key: string, value: string, extra: Partial<Variable> = {}): Variable => ({
  key,
  value,
  type: 'plain',
  updatedAt: T1,
  expiresAt: null,
  ...extra,
});
const keys = (cs: { key: string }[]) => cs.map((c) => c.key);

describe('rollback preview', () => {
  it('creates what is missing now, deletes what did not exist then, updates what differs, sorted by key', () => {
    const current = [v('SAME', '1'), v('CHANGED', 'new', { updatedAt: T2 }), v('ADDED_LATER', 'x'), v('A_LATER', 'y')];
    const then = [v('SAME', '1'), v('CHANGED', 'old'), v('REMOVED_LATER', 'z'), v('B_GONE', 'w')];
    const d = rollbackDiff(current, then);
    expect(keys(d.create)).toEqual(['B_GONE', 'REMOVED_LATER']);
    expect(keys(d.update)).toEqual(['CHANGED']);
    expect(keys(d.delete)).toEqual(['ADDED_LATER', 'A_LATER'].sort());
    expect(d.update[0]).toMatchObject({ current: { value: 'new' }, restored: { value: 'old' } });
    expect(d.update[0]!.unsure).toBeUndefined();
    expect(d.create[0]!.current).toBeUndefined();
    expect(d.delete[0]!.restored).toBeUndefined();
    expect(diffSize(d)).toBe(5);
  });

  it('counts a change of type or expiry as an update even when the value is the same', () => {
    const d = rollbackDiff(
      [v('TYPED', 's', { type: 'secret' }), v('EXPIRING', 'e', { expiresAt: T2 })],
      [v('TYPED', 's'), v('EXPIRING', 'e')],
    );
    expect(keys(d.update)).toEqual(['EXPIRING', 'TYPED']);
  });

  it('tells masked secrets apart by their version: the same version is the same value', () => {
    const secret = (key: string, updatedAt: string) => v(key, MASK, { type: 'secret', updatedAt });
    const d = rollbackDiff(
      [secret('UNTOUCHED', T1), secret('REWRITTEN', T2)],
      [secret('UNTOUCHED', T1), secret('REWRITTEN', T1)],
    );
    expect(keys(d.update)).toEqual(['REWRITTEN']);
    expect(d.update[0]!.unsure).toBe(true);
    // Revealed, the values decide, whatever the versions say.
    const plain = rollbackDiff(
      [v('REWRITTEN', 'same', { type: 'secret', updatedAt: T2 })],
      [v('REWRITTEN', 'same', { type: 'secret', updatedAt: T1 })],
    );
    expect(diffSize(plain)).toBe(0);
  });

  it('names the actions in words and keeps an unknown one readable', () => {
    expect(actionLabel('env.rollback')).toBe('Rolled back');
    expect(actionLabel('vars.bulk_upsert')).toBe('Saved variables');
    expect(actionLabel('something.new')).toBe('something.new');
  });
});
