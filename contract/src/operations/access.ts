import * as a from '../access.js';
import { emptyBody } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import { envParams } from '../projects.js';
import { defineOperation } from './define.js';

/** D74: access requests of one project; D76: who has access to an environment, and why. */
const tags = ['access'];

export const createAccessRequest = defineOperation(e.createAccessRequest, {
  tags,
  params: a.accessRequestsParams,
  body: a.createAccessRequestBody,
  responses: { 201: a.createdAccessRequest },
});
export const listAccessRequests = defineOperation(e.listAccessRequests, {
  tags,
  params: a.accessRequestsParams,
  query: a.listAccessRequestsQuery,
  responses: { 200: a.accessRequestsResponse },
});
export const approveAccessRequest = defineOperation(e.approveAccessRequest, {
  tags,
  params: a.accessRequestParams,
  body: a.approveAccessRequestBody,
  responses: { 200: a.accessRequest },
});
export const denyAccessRequest = defineOperation(e.denyAccessRequest, {
  tags,
  params: a.accessRequestParams,
  body: a.denyAccessRequestBody,
  responses: { 200: a.accessRequest },
});
export const withdrawAccessRequest = defineOperation(e.withdrawAccessRequest, {
  tags,
  params: a.accessRequestParams,
  body: emptyBody,
  responses: { 200: a.accessRequest },
});
export const getEnvAccess = defineOperation(e.getEnvAccess, {
  tags,
  params: envParams,
  responses: { 200: a.envAccessResponse },
});
