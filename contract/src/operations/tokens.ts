import { emptyBody, noContent } from '../common.js';
import { endpoints as e } from '../endpoints.js';
import * as t from '../tokens.js';
import { defineOperation } from './define.js';

/** D31/D10: token management needs a dashboard session; an access token describes itself (D58). */
const tags = ['tokens'];

export const describeOwnToken = defineOperation(e.describeOwnToken, {
  tags,
  responses: { 200: t.tokenSelfResponse },
});
export const listTokens = defineOperation(e.listTokens, { tags, responses: { 200: t.listTokensResponse } });
export const createToken = defineOperation(e.createToken, {
  tags,
  body: t.createTokenBody,
  responses: { 201: t.createTokenResponse },
});
export const rotateToken = defineOperation(e.rotateToken, {
  tags,
  params: t.tokenParams,
  body: emptyBody,
  responses: { 200: t.rotateTokenResponse },
});
export const revokeToken = defineOperation(e.revokeToken, {
  tags,
  params: t.tokenParams,
  responses: { 204: noContent },
});
