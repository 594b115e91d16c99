import { z } from 'zod';
import { auditLimit, envName, queryBool, timestamp, validateParam, varKey, varType, varValue } from './common.js';
import { OUTPUT_FORMATS } from './formats.js';

export const variable = z.object({
  key: z.string(),
  value: z.string(),
  type: varType,
  updatedAt: timestamp,
  expiresAt: timestamp.nullable(),
  resolvedValue: z.string().optional(),
  resolveError: z.string().optional(),
  /** Present when the stored value cannot be decrypted; `value` is then "" (an admin repairs it by restore or PUT). */
  valueError: z.literal('DECRYPT_FAILED').optional(),
  /** D75: true when the value shown is the caller's own override of the shared one (absent otherwise). */
  overridden: z.boolean().optional(),
});
export const listVarsQuery = z.strictObject({ reveal: queryBool.optional() });
export const listVarsResponse = z.object({ vars: z.array(variable) });

/** D24: at most 5,000 items in one bulk request. */
export const MAX_BULK_ITEMS = 5000;
export const bulkUpsertBody = z.strictObject({
  envs: z.array(envName).min(1).max(100),
  items: z
    .array(z.strictObject({ key: varKey, value: varValue, type: varType.default('secret') }))
    .min(1)
    .max(MAX_BULK_ITEMS),
});
export const bulkUpsertResponse = z.object({ created: z.array(z.string()), updated: z.array(z.string()) });

/** D67: the query of the variable writes (`PUT .../vars/:key`, the bulk upsert). */
export const varWriteQuery = z.strictObject({ validate: validateParam });

export const varParams = z.strictObject({ id: z.uuid(), env: envName, key: varKey });
export const updateVarBody = z
  .strictObject({
    value: varValue.optional(),
    type: varType.optional(),
    expiresAt: z.iso.datetime({ offset: true }).nullable().optional(),
    clearExpiry: z.boolean().optional(),
  })
  // An empty PUT would write a history entry, an audit row and a webhook event for nothing (ADR 0002).
  .refine((b) => Object.keys(b).length > 0, 'nothing to change: give value, type, expiresAt or clearExpiry');
export const updateVarResponse = z.object({
  key: z.string(),
  value: z.string(),
  type: varType,
  updatedAt: timestamp,
  expiresAt: timestamp.nullable(),
});

export const bulkDeleteBody = z.strictObject({ keys: z.array(varKey).min(1).max(MAX_BULK_ITEMS) });
export const bulkDeleteResponse = z.object({ deleted: z.number().int() });

export const historyEntry = z.object({
  id: z.number().int(),
  value: z.string(),
  type: varType,
  action: z.enum(['created', 'updated', 'deleted', 'restored']),
  changedBy: z.uuid().nullable(),
  changedAt: timestamp,
});
export const historyResponse = z.object({ history: z.array(historyEntry) });
export const restoreBody = z.strictObject({ versionId: z.number().int().positive() });
export const restoreResponse = z.object({ key: z.string(), value: z.string(), type: varType, updatedAt: timestamp });

/** D28, D55: the renderings of pull and export (docs/formats.md says which reader wants which). */
export const outputFormat = z.enum(OUTPUT_FORMATS);

/**
 * D44: the highest revision number. Revisions are 32-bit integers in the database (PostgreSQL's `integer`), so a
 * larger one names no revision and is refused as input (400 VALIDATION), not sent to the database, which would
 * refuse it with an error.
 */
export const MAX_REVISION = 2_147_483_647;
/** D44: a listing or pull at revision N (the state right after it). */
export const revisionParam = z
  .string()
  .regex(/^[0-9]{1,10}$/, 'must be a revision number')
  .transform(Number)
  .pipe(z.number().max(MAX_REVISION, 'must be a revision number'));
export const pullQuery = z.strictObject({
  metadata: queryBool.optional(),
  format: outputFormat.optional(),
  /** D43: with a matching If-None-Match, hold the answer up to this many seconds until the body changes. */
  wait: z
    .string()
    .regex(/^[0-9]{1,2}$/, 'must be a whole number of seconds from 1 to 60')
    .transform(Number)
    .pipe(z.number().int().min(1).max(60))
    .optional(),
  /** D44: the state right after this revision (references into other environments at their current state). */
  revision: revisionParam.optional(),
  /**
   * D67: only these variables (comma-separated key names), resolved with whatever they reference, and the
   * context variables; a key the environment lacks is 400 VALIDATION with field `keys`.
   */
  keys: z
    .string()
    .max(64 * 1024)
    .regex(/^[A-Za-z_][A-Za-z0-9_]*(?:,[A-Za-z_][A-Za-z0-9_]*)*$/, 'must be key names separated by commas')
    .transform((v) => [...new Set(v.split(','))])
    .pipe(z.array(varKey).max(MAX_BULK_ITEMS))
    .optional(),
});
export const exportQuery = z.strictObject({
  format: outputFormat.optional(),
  reveal: queryBool.optional(),
  metadata: queryBool.optional(),
});

export type Variable = z.infer<typeof variable>;
export type HistoryEntry = z.infer<typeof historyEntry>;
export { envName };

/** D44: one committed change to an environment's variables. `actor` as in webhooks (D34). */
export const revision = z.object({
  revision: z.number().int(),
  createdAt: timestamp,
  actor: z.string(),
  action: z.string(),
  created: z.array(z.string()),
  updated: z.array(z.string()),
  deleted: z.array(z.string()),
});
export const revisionsQuery = z.strictObject({ limit: auditLimit, cursor: z.string().max(200).optional() });
/** Newest first; `nextCursor` is "" on the last page, as for the audit log. */
export const revisionsResponse = z.object({ revisions: z.array(revision), nextCursor: z.string() });
export const listVarsAtQuery = z.strictObject({ reveal: queryBool.optional(), revision: revisionParam.optional() });
/** D45 */
export const rollbackBody = z.strictObject({ revision: z.number().int().min(0).max(MAX_REVISION) });
export const rollbackResponse = z.object({
  revision: z.number().int(),
  created: z.array(z.string()),
  updated: z.array(z.string()),
  deleted: z.array(z.string()),
});
export type Revision = z.infer<typeof revision>;

/** D75: a person's own value of a key; the listing masks as D26 (`?reveal=true` shows the values). */
export const putOverrideBody = z.strictObject({ value: varValue });
export const override = z.object({
  key: z.string(),
  value: z.string(),
  orphaned: z.boolean(),
  updatedAt: z.string(),
});
export const putOverrideResponse = override;
export const listOverridesQuery = listVarsQuery;
export const listOverridesResponse = z.object({ overrides: z.array(override) });
