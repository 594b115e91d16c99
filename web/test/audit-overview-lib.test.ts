/** The audit log's words and files (ADR 0015) and the overview's comparison, as pure functions. */

import type { AuditEntry, Variable } from '@svcenv/contract';
import { describe, expect, it } from 'vitest';
import { actionLabel, actorLabel, auditCsv, csvCell, dayBound, detailParts } from '../src/lib/audit.js';
import { type Listing, overviewRows } from '../src/lib/overview.js';

describe('audit lib', () => {
  it('words D36 actions and shows unknown ones raw', () => {
    expect(actionLabel('vars.pull')).toBe('Pulled variables');
    expect(actionLabel('thing.frobnicate')).toBe('thing.frobnicate');
    expect(actorLabel({ actorId: 'a1b2c3d4-0000-4000-8000-000000000000', actorName: null })).toBe('a1b2c3d4…');
    expect(actorLabel({ actorId: null, actorName: null })).toBe('—');
  });

  it('turns local days into the first and last instant of that day', () => {
    expect(Date.parse(dayBound('2026-12-02', 'from')!)).toBe(new Date(2026, 11, 2).getTime());
    expect(Date.parse(dayBound('2026-12-02', 'to')!)).toBe(new Date(2026, 11, 3).getTime() - 1);
    expect(dayBound('', 'from')).toBeUndefined();
  });

  it('writes RFC 4180 CSV and defuses formula cells', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('=SUM(A1)')).toBe("'=SUM(A1)");
    expect(csvCell('@x')).toBe("'@x");
    const e: AuditEntry = {
      id: 1,
      action: 'var.update',
      targetKey: 'K',
      targetEnv: 'dev',
      actorId: null,
      actorType: 'token',
      actorName: 'token:ci',
      detail: { keys: ['A', 'B'] },
      createdAt: '2026-12-01T10:00:00.000Z',
      project: { id: 'a1b2c3d4-0000-4000-8000-000000000000', name: 'Web, API', slug: 'web-api' },
    };
    expect(auditCsv([e]).split('\r\n')[1]).toBe(
      '2026-12-01T10:00:00.000Z,var.update,Updated variable,token,,token:ci,' +
        'a1b2c3d4-0000-4000-8000-000000000000,"Web, API",web-api,dev,K,"{""keys"":[""A"",""B""]}"',
    );
    expect(auditCsv([{ ...e, project: null }]).split('\r\n')[1]).toContain('token:ci,,,,dev,K,');
  });
});

describe('audit details in words', () => {
  const ann = 'a86e52fc-0000-4000-8000-000000000001';
  const cr = 'b1e4a740-0000-4000-8000-000000000002';
  it("names people by the server's detailNames, else a short id; a change request id is a part to link", () => {
    expect(detailParts({ detail: { userId: ann, permission: 'none' }, detailNames: { [ann]: 'Ann' } })).toEqual([
      { label: 'user', text: 'Ann' },
      { label: 'permission', text: 'none' },
    ]);
    expect(detailParts({ detail: { userId: ann } })).toEqual([{ label: 'user', text: 'a86e52fc…' }]);
    expect(detailParts({ detail: { changeRequest: cr, author: ann, updated: ['A', 'B'], created: [] } })).toEqual([
      { label: 'change request', text: 'b1e4a740…', changeRequest: cr },
      { label: 'author', text: 'a86e52fc…' },
      { label: 'updated', text: 'A, B' },
    ]);
    expect(detailParts({ detail: null })).toEqual([]);
  });
  it('stays about 120 characters long', () => {
    const parts = detailParts({ detail: { keys: Array.from({ length: 60 }, (_, i) => `KEY_${i}`), more: 'x' } });
    expect(parts).toHaveLength(1);
    expect(parts[0]!.text.endsWith('…')).toBe(true);
    expect(parts[0]!.text.length).toBeLessThanOrEqual(120);
  });
});

describe('overview rows', () => {
  const v = (key: string, value: string, type: 'plain' | 'secret' = 'plain'): Variable => ({
    key,
    value,
    type,
    updatedAt: '2026-12-01T10:00:00.000Z',
    expiresAt: null,
  });
  const listing = (...vars: Variable[]): Listing => ({ vars: new Map(vars.map((x) => [x.key, x])) });

  it('marks missing, same, differs, and masked secrets as set (not compared)', () => {
    const rows = overviewRows(
      ['dev', 'prod'],
      new Map([
        ['dev', listing(v('A', '1'), v('B', '1'), v('S', '***', 'secret'), v('ONLY', 'x'))],
        ['prod', listing(v('A', '1'), v('B', '2'), v('S', '***', 'secret'))],
      ]),
    );
    const by = Object.fromEntries(rows.map((r) => [r.key, [r.status, ...r.cells.map((c) => c.state)]]));
    expect(by).toEqual({
      A: ['same', 'same', 'same'],
      B: ['differs', 'differs', 'differs'],
      ONLY: ['missing', 'only', 'missing'],
      S: ['set', 'set', 'set'],
    });
    // An environment whose listing did not load is unknown, not missing.
    expect(overviewRows(['dev', 'x'], new Map([['dev', listing(v('A', '1'))]]))[0]!.cells[1]!.state).toBe('unknown');
  });

  it('compares what a pull gives: a reference by its resolved value, "same value, by reference" apart (ADR 0026)', () => {
    const ref = (key: string, value: string, resolvedValue: string, type: 'plain' | 'secret' = 'plain') => ({
      ...v(key, value, type),
      resolvedValue,
    });
    const rows = overviewRows(
      ['dev', 'staging', 'prod'],
      new Map([
        ['dev', listing(v('DB_HOST', 'db2.internal'), ref('URL', 'pg://${DB_HOST}', 'pg://db2'), v('LOOP', 'x'))],
        [
          'staging',
          listing(ref('DB_HOST', '${dev.DB_HOST}', 'db2.internal'), ref('URL', 'pg://${DB_HOST}', 'pg://db3'), {
            ...v('LOOP', '${LOOP}'),
            resolveError: 'circular',
          }),
        ],
        [
          'prod',
          listing(
            v('DB_HOST', 'db2.internal'),
            // A reference that used a secret is masked (D26): not compared.
            ref('URL', 'pg://${SECRET}', '***'),
            { ...v('LOOP', '${LOOP}'), resolveError: 'circular' },
          ),
        ],
      ]),
    );
    const by = Object.fromEntries(rows.map((r) => [r.key, [r.status, ...r.cells.map((c) => c.state)]]));
    expect(by).toEqual({
      DB_HOST: ['byRef', 'same', 'byRef', 'same'],
      // Same text, different pulls: they differ.
      URL: ['differs', 'differs', 'differs', 'set'],
      // An unresolvable value is not the value it would have had.
      LOOP: ['differs', 'differs', 'differs', 'differs'],
    });
    const same = overviewRows(
      ['a', 'b'],
      new Map([
        ['a', listing(ref('H', '${dev.H}', 'h'))],
        ['b', listing(ref('H', '${dev.H}', 'h'))],
      ]),
    );
    expect(same[0]!.status).toBe('same');
  });
});
