import { AppError } from './errors.js';

/** Opaque page cursors: a positive integer (an audit entry id, a revision number) in base64url. */
export function encodeCursor(id: number): string {
  return Buffer.from(String(id)).toString('base64url');
}
export function decodeCursor(cursor: string | undefined): number | null {
  if (cursor === undefined || cursor === '') return null;
  const id = Number(Buffer.from(cursor, 'base64url').toString());
  if (!Number.isSafeInteger(id) || id <= 0) throw new AppError('VALIDATION', 'invalid cursor', 'cursor');
  return id;
}
