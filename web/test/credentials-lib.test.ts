/** D71/D72 in words: lease states, durations, addresses and the statements text area (web/src/lib/credentials.ts). */
import { LEASE_STATES } from '@svcenv/contract';
import { describe, expect, it } from 'vitest';
import {
  address,
  duration,
  formatStatements,
  isOpen,
  LEASE_STATE,
  parseStatements,
  revokeFailedWords,
} from '../src/lib/credentials.js';

describe('credentials in words (D71, D72)', () => {
  it('names every lease state, revoke_failed as the loud one, and knows which are open', () => {
    for (const s of LEASE_STATES) expect(LEASE_STATE[s].label).toBeTruthy();
    expect(LEASE_STATE.revoke_failed).toEqual({ label: 'revoke failed', tone: 'bad' });
    expect(LEASE_STATES.filter(isOpen)).toEqual(['creating', 'active', 'revoking', 'revoke_failed']);
  });

  it("says what a failed revocation means, with the database's answer", () => {
    expect(revokeFailedWords('connection refused (127.0.0.1:3306).')).toBe(
      'connection refused (127.0.0.1:3306). The database may still hold this user; svcenv keeps retrying.',
    );
    expect(revokeFailedWords(null)).toBe(
      'the database refused the revoke statements. The database may still hold this user; svcenv keeps retrying.',
    );
  });

  it('durations in their largest whole unit; addresses with the database', () => {
    expect([30, 90, 1800, 3600, 5400, 86_400, 172_800].map(duration)).toEqual([
      '30 s',
      '90 s',
      '30 min',
      '1 h',
      '90 min',
      '1 day',
      '2 days',
    ]);
    expect(address({ host: 'db.internal', port: 5432, database: 'app' })).toBe('db.internal:5432/app');
    expect(address({ host: '::1', port: 6379, database: null })).toBe('[::1]:6379');
  });

  it('reads SQL statements ended by ; at a line end (one may span lines), and Redis commands per line', () => {
    const sql = `CREATE USER '{{username}}'@'%'\n  IDENTIFIED BY '{{password}}';\n\nGRANT SELECT ON app.* TO '{{username}}'@'%';\nSELECT 1`;
    expect(parseStatements('mysql', sql)).toEqual([
      `CREATE USER '{{username}}'@'%'\n  IDENTIFIED BY '{{password}}'`,
      `GRANT SELECT ON app.* TO '{{username}}'@'%'`,
      'SELECT 1',
    ]);
    expect(parseStatements('redis', 'ACL SETUSER {{username}} on >{{password}} ~app:*  +@read\n\n')).toEqual([
      ['ACL', 'SETUSER', '{{username}}', 'on', '>{{password}}', '~app:*', '+@read'],
    ]);
    const back = formatStatements(parseStatements('postgres', 'A;\nB;'));
    expect(back).toBe('A;\nB;');
    expect(parseStatements('postgres', back)).toEqual(['A', 'B']);
  });
});
