import { z } from 'zod';
import { envName, queryBool, timestamp, varKey, varType, varValue } from './common.js';

export const variable = z.object({
  key: z.string(),
  value: z.string(),
  type: varType,
  updatedAt: timestamp,
  expiresAt: timestamp.nullable(),
  resolvedValue: z.string().optional(),
  resolveError: z.string().optional(),
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

export const pullQuery = z.strictObject({
  metadata: queryBool.optional(),
  format: z.enum(['dotenv', 'k8s']).optional(),
});
export const exportQuery = z.strictObject({
  format: z.enum(['dotenv', 'k8s']).optional(),
  reveal: queryBool.optional(),
  metadata: queryBool.optional(),
});

export type Variable = z.infer<typeof variable>;
export type HistoryEntry = z.infer<typeof historyEntry>;
export { envName };
