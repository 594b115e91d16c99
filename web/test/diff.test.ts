import type { Variable } from '@svcenv/contract';
import { describe, expect, it } from 'vitest';
import { diffRows, diffSummary } from '../src/lib/diff.js';
import { expiresIn } from '../src/lib/format.js';

const v = (key: string, value: string, type: Variable['type'] = 'plain'): Variable => ({
  key,
  value,
  type,
  updatedAt: '2026-01-01T00:00:00.000Z',
  expiresAt: null,
});

describe('environment diff rows', () => {
  it('follows the server verdict, sorts differences first, and keeps identical keys', () => {
    const a = [v('SAME', '1'), v('SECRET', '***', 'secret'), v('ONLY_A', 'a'), v('CHANGED', 'x'), v('HOST', 'db2')];
    const b = [v('SAME', '1'), v('SECRET', '***', 'secret'), v('ONLY_B', 'b'), v('CHANGED', 'y')];
    b.push({ ...v('HOST', '${dev.HOST}'), resolvedValue: 'db2' });
    // The masked secrets look equal here; the server compared the real values and says they differ. HOST is
    // written differently and pulled alike (ADR 0026).
    const rows = diffRows(
      { onlyInA: ['ONLY_A'], onlyInB: ['ONLY_B'], different: ['CHANGED', 'SECRET'], sameByReference: ['HOST'] },
      a,
      b,
    );
    expect(rows.map((r) => [r.key, r.status])).toEqual([
      ['CHANGED', 'different'],
      ['SECRET', 'different'],
      ['ONLY_A', 'onlyA'],
      ['ONLY_B', 'onlyB'],
      ['HOST', 'sameByRef'],
      ['SAME', 'same'],
    ]);
    expect(rows[2]!.b).toBeUndefined();
    expect(rows[3]!.a).toBeUndefined();
    expect(diffSummary(rows)).toEqual({ different: 2, onlyA: 1, onlyB: 1, sameByRef: 1, same: 1 });
  });

  it('shows a key the diff names even when a listing lacks it', () => {
    const rows = diffRows({ onlyInA: ['GONE'], onlyInB: [], different: [], sameByReference: [] }, [], []);
    expect(rows).toEqual([{ key: 'GONE', status: 'onlyA', a: undefined, b: undefined }]);
  });
});

describe('expiry marker', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  it('counts whole days ahead and warns within a week', () => {
    expect(expiresIn('2026-03-31T12:00:00Z', now)).toEqual({ label: 'expires in 30 days', tone: 'ok' });
    expect(expiresIn('2026-03-06T00:00:00Z', now)).toEqual({ label: 'expires in 5 days', tone: 'warn' });
    expect(expiresIn('2026-03-01T18:00:00Z', now)).toEqual({ label: 'expires within a day', tone: 'warn' });
  });
  it('says how long ago an expired value expired', () => {
    expect(expiresIn('2026-02-27T11:00:00Z', now)).toEqual({ label: 'expired 2 days ago', tone: 'bad' });
    expect(expiresIn('2026-03-01T11:00:00Z', now)).toEqual({ label: 'expired today', tone: 'bad' });
  });
});
