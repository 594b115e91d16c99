import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import type { Deps } from '../services/core/deps.js';
import * as identities from '../services/identity/identities.js';
import { oidcLogin } from '../services/identity/oidc.js';

/** D60: workload identities (Owner, dashboard session, D10) and the exchange of a platform JWT (no credential). */
export async function identityRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  route(app, ops.listIdentities, async (req) => ({ identities: await identities.listIdentities(req.ctx) }));

  route(app, ops.createIdentity, async (req, reply) =>
    reply.status(201).send(await identities.createIdentity(req.ctx, req.body)),
  );

  route(app, ops.getIdentity, async (req) => identities.getIdentity(req.ctx, req.params));

  route(app, ops.updateIdentity, async (req) => identities.updateIdentity(req.ctx, { ...req.params, ...req.body }));

  route(app, ops.deleteIdentity, async (req, reply) => {
    await identities.deleteIdentity(req.ctx, req.params);
    return reply.status(204).send(null);
  });

  route(app, ops.oidcLogin, async (req, reply) =>
    reply.status(201).send(await oidcLogin(deps, { ...req.body, ip: req.ip })),
  );
}
