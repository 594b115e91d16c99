import * as a from '../audit-streams.js';
import { noContent } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import { defineOperation } from './define.js';

/** Audit streams (D65): Owner only, dashboard session only (D10). */
const tags = ['audit-streams'];

export const listAuditStreams = defineOperation(e.listAuditStreams, {
  tags,
  responses: { 200: a.listAuditStreamsResponse },
});
export const createAuditStream = defineOperation(e.createAuditStream, {
  tags,
  body: a.createAuditStreamBody,
  responses: { 201: a.createAuditStreamResponse },
});
export const deleteAuditStream = defineOperation(e.deleteAuditStream, {
  tags,
  params: a.auditStreamParams,
  responses: { 204: noContent },
});
