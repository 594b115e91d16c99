import { emptyBody, noContent } from '../common.js';
import * as c from '../credentials.js';
import { endpoints as e } from '../endpoints.js';
import { envParams, projectParams } from '../projects.js';
import { defineOperation } from './define.js';

/** D70: a project's connections to the databases whose users svcenv manages (Owners and project Admins). */
const connections = ['connections'];
export const listConnections = defineOperation(e.listConnections, {
  tags: connections,
  params: projectParams,
  responses: { 200: c.listConnectionsResponse },
});
export const createConnection = defineOperation(e.createConnection, {
  tags: connections,
  params: projectParams,
  body: c.createConnectionBody,
  responses: { 201: c.connection },
});
export const getConnection = defineOperation(e.getConnection, {
  tags: connections,
  params: c.connectionParams,
  responses: { 200: c.connection },
});
export const updateConnection = defineOperation(e.updateConnection, {
  tags: connections,
  params: c.connectionParams,
  body: c.updateConnectionBody,
  responses: { 200: c.connection },
});
export const deleteConnection = defineOperation(e.deleteConnection, {
  tags: connections,
  params: c.connectionParams,
  responses: { 204: noContent },
});
export const testConnection = defineOperation(e.testConnection, {
  tags: connections,
  params: c.connectionParams,
  body: emptyBody,
  responses: { 200: c.testConnectionResponse },
});
export const rotateConnectionRoot = defineOperation(e.rotateConnectionRoot, {
  tags: connections,
  params: c.connectionParams,
  body: emptyBody,
  responses: { 200: c.connection },
});

/** D71: an environment's dynamic secrets and their leases. */
const dynamic = ['dynamic secrets'];
export const listDynamicSecrets = defineOperation(e.listDynamicSecrets, {
  tags: dynamic,
  params: envParams,
  responses: { 200: c.listDynamicSecretsResponse },
});
export const getDynamicSecret = defineOperation(e.getDynamicSecret, {
  tags: dynamic,
  params: c.dynamicParams,
  responses: { 200: c.dynamicSecret },
});
export const putDynamicSecret = defineOperation(e.putDynamicSecret, {
  tags: dynamic,
  params: c.dynamicParams,
  body: c.putDynamicSecretBody,
  responses: { 200: c.dynamicSecret },
});
export const deleteDynamicSecret = defineOperation(e.deleteDynamicSecret, {
  tags: dynamic,
  params: c.dynamicParams,
  responses: { 204: noContent },
});
export const listLeases = defineOperation(e.listLeases, {
  tags: dynamic,
  params: c.dynamicParams,
  query: c.listLeasesQuery,
  responses: { 200: c.listLeasesResponse },
});
export const createLease = defineOperation(e.createLease, {
  tags: dynamic,
  params: c.dynamicParams,
  body: c.createLeaseBody,
  responses: { 201: c.createdLease },
});
export const renewLease = defineOperation(e.renewLease, {
  tags: dynamic,
  params: c.leaseParams,
  body: c.renewLeaseBody,
  responses: { 200: c.renewedLease },
});
export const revokeLease = defineOperation(e.revokeLease, {
  tags: dynamic,
  params: c.leaseParams,
  responses: { 204: noContent },
});

/** D72: secret variables whose database password svcenv rotates. */
const rotations = ['rotations'];
export const listRotations = defineOperation(e.listRotations, {
  tags: rotations,
  params: envParams,
  responses: { 200: c.listRotationsResponse },
});
export const putRotation = defineOperation(e.putRotation, {
  tags: rotations,
  params: c.rotationParams,
  body: c.putRotationBody,
  responses: { 200: c.rotation },
});
export const deleteRotation = defineOperation(e.deleteRotation, {
  tags: rotations,
  params: c.rotationParams,
  responses: { 204: noContent },
});
export const rotateNow = defineOperation(e.rotateNow, {
  tags: rotations,
  params: c.rotationParams,
  body: emptyBody,
  responses: { 200: c.rotation },
});
