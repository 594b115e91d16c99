import { z } from 'zod';
import { envName, queryBool, timestamp, uuid, validateParam, varKey, varType, varValue } from './common.js';
import { MAX_BULK_ITEMS } from './variables.js';

/**
 * D47: change requests. A proposed set of changes to one environment, applied in one revision when an Owner
 * or project Admin other than its author approves it.
 */
export const CHANGE_REQUEST_STATUSES = ['open', 'applied', 'rejected', 'withdrawn'] as const;
export const changeRequestStatus = z.enum(CHANGE_REQUEST_STATUSES);

export const changeRequestParams = z.strictObject({ id: uuid, env: envName, requestId: uuid });

export const createChangeRequestBody = z
  .strictObject({
    message: z.string().trim().min(1).max(2000),
    set: z
      .array(
        z.strictObject({
          key: varKey,
          value: varValue,
          /** Omitted: the variable's current type, or `secret` for a new key (as the bulk upsert). */
          type: varType.optional(),
          /** Omitted: the variable keeps its expiry. */
          expiresAt: z.iso.datetime({ offset: true }).optional(),
        }),
      )
      .max(MAX_BULK_ITEMS)
      .default([]),
    delete: z.array(varKey).max(MAX_BULK_ITEMS).default([]),
  })
  .refine((b) => b.set.length + b.delete.length > 0, {
    message: 'nothing to change: give set or delete',
    path: ['set'],
  });

/**
 * `reveal=true` (write permission) shows secret values, as in listings. `validate=true` (D67) applies to a
 * submission only: its `set` values are checked as the environment would be once applied.
 */
export const changeRequestQuery = z.strictObject({ reveal: queryBool.optional(), validate: validateParam });
export const listChangeRequestsQuery = z.strictObject({
  status: changeRequestStatus.optional(),
  reveal: queryBool.optional(),
});
export const rejectChangeRequestBody = z.strictObject({ reason: z.string().trim().max(2000).optional() }).nullish();

export const changeRequestChange = z.object({
  key: z.string(),
  op: z.enum(['set', 'delete']),
  type: varType,
  /** Masked (`***`) for a secret unless revealed; "" for a delete. */
  value: z.string(),
  /** Only on a `set` that gives one. */
  expiresAt: timestamp.optional(),
});

export const changeRequest = z.object({
  id: uuid,
  status: changeRequestStatus,
  env: z.string(),
  /** The environment's revision when the request was opened; approval is refused if a touched key changed since. */
  baseRevision: z.number().int(),
  /** The author's display name (D34 `actor`: the user's name, or `token:<name>`). */
  author: z.string(),
  /** The user who opened it (a token's creator), who alone may withdraw it and may not approve it. */
  authorId: uuid,
  message: z.string(),
  createdAt: timestamp,
  changes: z.array(changeRequestChange),
  /** Once closed: who closed it and when. */
  closedBy: z.string().optional(),
  closedAt: timestamp.optional(),
  /** The revision its approval made (status `applied`). */
  appliedRevision: z.number().int().optional(),
  /** The reason a rejection gave. */
  reason: z.string().optional(),
});
export const changeRequestsResponse = z.object({ changeRequests: z.array(changeRequest) });

export type ChangeRequest = z.infer<typeof changeRequest>;
export type ChangeRequestStatus = z.infer<typeof changeRequestStatus>;
