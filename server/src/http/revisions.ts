import type { FastifyReply, FastifyRequest } from 'fastify';
import { validation } from '../lib/errors.js';

/** D44: the revision an answer shows or a write made. */
export const REVISION_HEADER = 'x-svcenv-revision';

/** D46: `If-Match: "rev:<n>"` (a weak `W/` prefix is ignored); anything else in the header is a 400. */
export function ifMatch(req: FastifyRequest): { ifRevision?: number } {
  const header = req.headers['if-match'];
  if (header === undefined) return {};
  const m = /^\s*(?:W\/)?"rev:([0-9]{1,15})"\s*$/.exec(header);
  if (!m) throw validation('If-Match', 'If-Match must be "rev:<revision>", the revision the change was based on');
  return { ifRevision: Number(m[1]) };
}

/** Sets X-Svcenv-Revision from a write's answer, and returns the answer (its schema drops the field). */
export function withRevision<T extends { revision?: number }>(reply: FastifyReply, result: T): T {
  if (result.revision !== undefined) reply.header(REVISION_HEADER, String(result.revision));
  return result;
}
