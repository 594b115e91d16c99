/**
 * D70-D72 in words: a lease's state and its badge, durations, a connection's address, and the statements of a
 * dynamic secret as typed in a text area. Pure, unit-tested (test/credentials-lib.test.ts).
 */
import type {
  MAX_LEASES as CONTRACT_MAX_LEASES,
  ROTATION_MIN_INTERVAL as CONTRACT_MIN_INTERVAL,
  DEFAULT_PORTS as CONTRACT_PORTS,
  LEASE_TTL as CONTRACT_TTL,
  Connection,
  LeaseState,
} from '@svcenv/contract';

// The contract's bounds, restated (a value from the package index would put zod in the bundle); the
// type-check holds them equal to the contract's.
export const DEFAULT_PORTS = { postgres: 5432, mysql: 3306, redis: 6379 } as const satisfies typeof CONTRACT_PORTS;
export const LEASE_TTL = {
  min: 30,
  default: 3_600,
  maxDefault: 86_400,
  ceiling: 31 * 86_400,
} as const satisfies typeof CONTRACT_TTL;
export const MAX_LEASES = { default: 100, max: 10_000 } as const satisfies typeof CONTRACT_MAX_LEASES;
export const ROTATION_MIN_INTERVAL: typeof CONTRACT_MIN_INTERVAL = 300;

/** A lease's state as a person reads it, and its badge's tone; `revoke_failed` is the loud one (D71). */
export const LEASE_STATE: Record<LeaseState, { label: string; tone: 'ok' | 'warn' | 'bad' | 'info' | 'neutral' }> = {
  creating: { label: 'creating', tone: 'info' },
  active: { label: 'active', tone: 'ok' },
  revoking: { label: 'revoking', tone: 'warn' },
  revoke_failed: { label: 'revoke failed', tone: 'bad' },
  revoked: { label: 'revoked', tone: 'neutral' },
  expired: { label: 'expired', tone: 'neutral' },
  failed: { label: 'failed', tone: 'neutral' },
};

/** Not yet ended: what may still be revoked by hand (D71's open states). */
export const isOpen = (s: LeaseState) =>
  s === 'creating' || s === 'active' || s === 'revoking' || s === 'revoke_failed';

/** The sentence beside a `revoke_failed` lease: the database's last answer, and that svcenv keeps at it. */
export function revokeFailedWords(lastError: string | null): string {
  const why = lastError?.trim() ? lastError.trim().replace(/\.$/, '') : 'the database refused the revoke statements';
  return `${why}. The database may still hold this user; svcenv keeps retrying.`;
}

/** 3600 → "1 h", 90 → "90 s", 86400 → "1 day", 5400 → "90 min". */
export function duration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** `host:port/database` (IPv6 hosts bracketed). */
export function address(c: Pick<Connection, 'host' | 'port' | 'database'>): string {
  const host = c.host.includes(':') ? `[${c.host}]` : c.host;
  return `${host}:${c.port}${c.database ? `/${c.database}` : ''}`;
}

export const KIND_LABEL: Record<Connection['kind'], string> = {
  postgres: 'PostgreSQL',
  mysql: 'MySQL / MariaDB',
  redis: 'Redis',
};

export const TLS_LABEL: Record<Connection['tls']['mode'], string> = {
  disable: 'no TLS',
  require: 'TLS',
  verify: 'TLS, verified',
};

/**
 * A text area's statements: SQL separated by lines that hold only `;`-ended text (one statement may span
 * lines; a statement ends at a `;` at the end of a line). Redis: one command per line, its arguments split on
 * spaces. Empty lines are ignored.
 */
export function parseStatements(kind: Connection['kind'], text: string): (string | string[])[] {
  if (kind === 'redis') {
    return text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .map((l) => l.split(/\s+/));
  }
  const out: string[] = [];
  let current: string[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim() && current.length === 0) continue;
    current.push(line);
    if (line.trimEnd().endsWith(';')) {
      out.push(current.join('\n').trim().replace(/;$/, '').trim());
      current = [];
    }
  }
  const rest = current.join('\n').trim();
  if (rest) out.push(rest);
  return out.filter(Boolean);
}

/** Statements back into the text area's form. */
export function formatStatements(statements: (string | string[])[]): string {
  return statements.map((s) => (Array.isArray(s) ? s.join(' ') : `${s};`)).join('\n');
}

/** Example create statements per kind, with the placeholders svcenv fills. */
export const CREATE_EXAMPLE: Record<Connection['kind'], string> = {
  postgres:
    `CREATE ROLE "{{username}}" LOGIN PASSWORD '{{password}}' VALID UNTIL '{{expiration}}';\n` +
    'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{{username}}";',
  mysql: `CREATE USER '{{username}}'@'%' IDENTIFIED BY '{{password}}';\nGRANT SELECT ON app.* TO '{{username}}'@'%';`,
  redis: 'ACL SETUSER {{username}} on >{{password}} ~app:* +@read',
};
