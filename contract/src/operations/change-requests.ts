import * as cr from '../change-requests.js';
import { emptyBody, noContent } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import { envParams } from '../projects.js';
import { defineOperation } from './define.js';

/** D47: change requests of one environment. */
const tags = ['change requests'];
const params = cr.changeRequestParams;

export const openChangeRequest = defineOperation(e.openChangeRequest, {
  tags,
  params: envParams,
  query: cr.changeRequestQuery,
  body: cr.createChangeRequestBody,
  responses: { 201: cr.changeRequest },
});
export const listChangeRequests = defineOperation(e.listChangeRequests, {
  tags,
  params: envParams,
  query: cr.listChangeRequestsQuery,
  responses: { 200: cr.changeRequestsResponse },
});
export const getChangeRequest = defineOperation(e.getChangeRequest, {
  tags,
  params,
  query: cr.changeRequestQuery,
  responses: { 200: cr.changeRequest },
});
export const approveChangeRequest = defineOperation(e.approveChangeRequest, {
  tags,
  params,
  body: emptyBody,
  responses: { 200: cr.changeRequest },
});
export const rejectChangeRequest = defineOperation(e.rejectChangeRequest, {
  tags,
  params,
  body: cr.rejectChangeRequestBody,
  responses: { 200: cr.changeRequest },
});
export const withdrawChangeRequest = defineOperation(e.withdrawChangeRequest, {
  tags,
  params,
  responses: { 204: noContent },
});
