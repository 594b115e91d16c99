import { noContent } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import * as i from '../identities.js';
import { defineOperation } from './define.js';

/** D60: workload identities, managed by Owners with a dashboard session (D10); the exchange needs no credential. */
const tags = ['identities'];
const params = i.identityParams;

export const listIdentities = defineOperation(e.listIdentities, {
  tags,
  responses: { 200: i.listIdentitiesResponse },
});
export const createIdentity = defineOperation(e.createIdentity, {
  tags,
  body: i.createIdentityBody,
  responses: { 201: i.identity },
});
export const getIdentity = defineOperation(e.getIdentity, { tags, params, responses: { 200: i.identity } });
export const updateIdentity = defineOperation(e.updateIdentity, {
  tags,
  params,
  body: i.updateIdentityBody,
  responses: { 200: i.identity },
});
export const deleteIdentity = defineOperation(e.deleteIdentity, { tags, params, responses: { 204: noContent } });
export const oidcLogin = defineOperation(e.oidcLogin, {
  tags,
  body: i.oidcLoginBody,
  responses: { 201: i.oidcLoginResponse },
});
