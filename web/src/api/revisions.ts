/** Versions of a whole environment: its revisions (D44), its variables at one, and rollback (D45, D46). */
import type { Revision, rollbackResponse } from '@svcenv/contract';
import { endpoints as e } from '@svcenv/contract/endpoints';
import type { z } from 'zod';
import { api } from '../api.js';

export type { Revision };
export type RollbackResult = z.infer<typeof rollbackResponse>;

/** Newest first; `cursor` is the previous page's `nextCursor`, which is "" after the last page. */
export const listRevisions = (projectId: string, env: string, opts: { limit?: number; cursor?: string } = {}) =>
  api.call(e.listRevisions, {
    params: { id: projectId, env },
    query: {
      limit: opts.limit === undefined ? undefined : String(opts.limit),
      cursor: opts.cursor || undefined,
    },
  });

/** The state right after `revision`; `reveal` answers plaintext and needs write permission (D57). */
export const listVarsAt = (projectId: string, env: string, revision: number, reveal = false) =>
  api.call(e.listVars, {
    params: { id: projectId, env },
    query: { revision: String(revision), ...(reveal ? { reveal: 'true' as const } : {}) },
  });

/**
 * Restores the state right after `revision` as one new revision. `ifRevision` is the revision the caller
 * compared against: if the environment moved since, the server writes nothing and answers 412
 * PRECONDITION_FAILED (D46), so someone else's change is never silently undone.
 */
export const rollback = (projectId: string, env: string, revision: number, ifRevision: number) =>
  api.call(e.rollback, {
    params: { id: projectId, env },
    body: { revision },
    headers: { 'if-match': `"rev:${ifRevision}"` },
  });
