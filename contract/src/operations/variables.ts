import { noContent } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import { envParams, projectParams } from '../projects.js';
import * as v from '../variables.js';
import { defineOperation } from './define.js';

/** Spec "Variable endpoints"; revisions and rollback (D44-D46). Writes take If-Match "rev:<n>" (D46). */
const tags = ['variables'];

export const listVars = defineOperation(e.listVars, {
  tags,
  params: envParams,
  query: v.listVarsAtQuery,
  responses: { 200: v.listVarsResponse },
});
export const bulkUpsert = defineOperation(e.bulkUpsert, {
  tags,
  params: projectParams,
  query: v.varWriteQuery,
  body: v.bulkUpsertBody,
  responses: { 200: v.bulkUpsertResponse },
});
export const updateVar = defineOperation(e.updateVar, {
  tags,
  params: v.varParams,
  query: v.varWriteQuery,
  body: v.updateVarBody,
  responses: { 200: v.updateVarResponse },
});
export const deleteVar = defineOperation(e.deleteVar, { tags, params: v.varParams, responses: { 204: noContent } });
export const bulkDelete = defineOperation(e.bulkDelete, {
  tags,
  params: envParams,
  body: v.bulkDeleteBody,
  responses: { 200: v.bulkDeleteResponse },
});
export const varHistory = defineOperation(e.varHistory, {
  tags,
  params: v.varParams,
  query: v.listVarsQuery,
  responses: { 200: v.historyResponse },
});
export const restoreVar = defineOperation(e.restoreVar, {
  tags,
  params: v.varParams,
  body: v.restoreBody,
  responses: { 200: v.restoreResponse },
});
export const listRevisions = defineOperation(e.listRevisions, {
  tags,
  params: envParams,
  query: v.revisionsQuery,
  responses: { 200: v.revisionsResponse },
});
export const rollback = defineOperation(e.rollback, {
  tags,
  params: envParams,
  body: v.rollbackBody,
  responses: { 200: v.rollbackResponse },
});

/** D75: personal overrides. */
export const listOverrides = defineOperation(e.listOverrides, {
  tags,
  params: envParams,
  query: v.listOverridesQuery,
  responses: { 200: v.listOverridesResponse },
});
export const putOverride = defineOperation(e.putOverride, {
  tags,
  params: v.varParams,
  body: v.putOverrideBody,
  responses: { 200: v.putOverrideResponse },
});
export const deleteOverride = defineOperation(e.deleteOverride, {
  tags,
  params: v.varParams,
  responses: { 204: noContent },
});
