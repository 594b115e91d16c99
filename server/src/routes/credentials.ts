import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import * as connections from '../services/credentials/connections.js';
import * as dynamic from '../services/credentials/dynamic-secrets.js';
import * as leases from '../services/credentials/leases.js';
import * as rotations from '../services/credentials/rotations.js';

/**
 * D70 connections (/v1/projects/:id/connections[/:name[/test|/rotate-root]]), D71 dynamic secrets and their
 * leases (/envs/:env/dynamic[/:name[/leases[/:leaseId[/renew]]]]), D72 rotations (/envs/:env/rotations[/:key
 * [/rotate]]).
 */
export async function credentialRoutes(app: FastifyInstance) {
  const conn = (p: { id: string; name: string }) => ({ projectId: p.id, name: p.name });
  route(app, ops.listConnections, async (req) => ({
    connections: await connections.listConnections(req.ctx, { projectId: req.params.id }),
  }));
  route(app, ops.createConnection, async (req, reply) =>
    reply.status(201).send(await connections.createConnection(req.ctx, { projectId: req.params.id, ...req.body })),
  );
  route(app, ops.getConnection, async (req) => connections.getConnection(req.ctx, conn(req.params)));
  route(app, ops.updateConnection, async (req) =>
    connections.updateConnection(req.ctx, { ...conn(req.params), ...req.body }),
  );
  route(app, ops.deleteConnection, async (req, reply) => {
    await connections.deleteConnection(req.ctx, conn(req.params));
    return reply.status(204).send(null);
  });
  route(app, ops.testConnection, async (req) => connections.testConnection(req.ctx, conn(req.params)));
  route(app, ops.rotateConnectionRoot, async (req) => connections.rotateRoot(req.ctx, conn(req.params)));

  const secret = (p: { id: string; env: string; name: string }) => ({ projectId: p.id, env: p.env, name: p.name });
  route(app, ops.listDynamicSecrets, async (req) => ({
    dynamicSecrets: await dynamic.listDynamicSecrets(req.ctx, { projectId: req.params.id, env: req.params.env }),
  }));
  route(app, ops.getDynamicSecret, async (req) => dynamic.getDynamicSecret(req.ctx, secret(req.params)));
  route(app, ops.putDynamicSecret, async (req) =>
    dynamic.putDynamicSecret(req.ctx, { ...secret(req.params), ...req.body }),
  );
  route(app, ops.deleteDynamicSecret, async (req, reply) => {
    await dynamic.deleteDynamicSecret(req.ctx, secret(req.params));
    return reply.status(204).send(null);
  });
  route(app, ops.listLeases, async (req) => ({
    leases: await leases.listLeases(req.ctx, { ...secret(req.params), state: req.query.state }),
  }));
  route(app, ops.createLease, async (req, reply) =>
    reply
      .status(201)
      .send(await leases.createLease(req.ctx, { ...secret(req.params), ttlSeconds: req.body?.ttlSeconds })),
  );
  route(app, ops.renewLease, async (req) =>
    leases.renewLease(req.ctx, {
      ...secret(req.params),
      leaseId: req.params.leaseId,
      ttlSeconds: req.body?.ttlSeconds,
    }),
  );
  route(app, ops.revokeLease, async (req, reply) => {
    await leases.revokeLease(req.ctx, { ...secret(req.params), leaseId: req.params.leaseId });
    return reply.status(204).send(null);
  });

  const bound = (p: { id: string; env: string; key: string }) => ({ projectId: p.id, env: p.env, key: p.key });
  route(app, ops.listRotations, async (req) => ({
    rotations: await rotations.listRotations(req.ctx, { projectId: req.params.id, env: req.params.env }),
  }));
  route(app, ops.putRotation, async (req) => rotations.putRotation(req.ctx, { ...bound(req.params), ...req.body }));
  route(app, ops.deleteRotation, async (req, reply) => {
    await rotations.deleteRotation(req.ctx, bound(req.params));
    return reply.status(204).send(null);
  });
  route(app, ops.rotateNow, async (req) => rotations.rotateNow(req.ctx, bound(req.params)));
}
