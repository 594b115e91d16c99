import { auditTimeInRange } from '@svcenv/contract';
import { AppError } from './errors.js';

/**
 * Opaque page cursors: a positive integer (an audit entry id, a revision number) in base64url, at most `max`
 * (the largest value its column holds: a cursor beyond it names nothing and is refused, not sent to the
 * database).
 */
export function encodeCursor(id: number): string {
  return Buffer.from(String(id)).toString('base64url');
}
export function decodeCursor(cursor: string | undefined, max = Number.MAX_SAFE_INTEGER): number | null {
  if (cursor === undefined || cursor === '') return null;
  const id = Number(Buffer.from(cursor, 'base64url').toString());
  if (!Number.isSafeInteger(id) || id <= 0 || id > max) throw new AppError('VALIDATION', 'invalid cursor', 'cursor');
  return id;
}

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Audit pages are ordered by (created_at, id) (D64): their cursor is the last entry's pair. */
export function encodeAuditCursor(createdAt: string, id: number): string {
  return Buffer.from(`${createdAt}~${id}`).toString('base64url');
}

/**
 * An audit cursor: the pair, or `{ id }` alone for a cursor handed out before D64 (a bare id), which the
 * caller completes with that entry's time.
 */
export function decodeAuditCursor(cursor: string | undefined): { createdAt?: string; id: number } | null {
  if (cursor === undefined || cursor === '') return null;
  const text = Buffer.from(cursor, 'base64url').toString();
  const sep = text.indexOf('~');
  if (sep < 0) return { id: decodeCursor(cursor)! };
  const createdAt = text.slice(0, sep);
  const id = Number(text.slice(sep + 1));
  // A time that reads back the same: it is compared as a time (a timestamptz on PostgreSQL), and 2026-13-45
  // would otherwise fail there instead of being refused here.
  const at = new Date(createdAt);
  const valid = ISO_INSTANT.test(createdAt) && auditTimeInRange(at) && at.toISOString() === createdAt;
  if (!valid || !Number.isSafeInteger(id) || id <= 0) {
    throw new AppError('VALIDATION', 'invalid cursor', 'cursor');
  }
  return { createdAt, id };
}
