import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import { ifMatch, REVISION_HEADER, withRevision } from '../http/revisions.js';
import type { EnvTarget } from '../services/core/authz.js';
import * as overrides from '../services/variables/overrides.js';
import * as revisions from '../services/variables/revisions.js';
import * as vars from '../services/variables/variables.js';

export async function variableRoutes(app: FastifyInstance) {
  // D75: personal overrides
  route(app, ops.listOverrides, async (req) => ({
    overrides: await overrides.listOverrides(req.ctx, { ...target(req.params), reveal: req.query.reveal ?? false }),
  }));
  route(app, ops.putOverride, async (req) =>
    overrides.putOverride(req.ctx, { ...target(req.params), key: req.params.key, value: req.body.value }),
  );
  route(app, ops.deleteOverride, async (req, reply) => {
    await overrides.deleteOverride(req.ctx, { ...target(req.params), key: req.params.key });
    return reply.status(204).send(null);
  });

  route(app, ops.listVars, async (req, reply) => {
    const { vars: listed, revision } = await vars.listVars(req.ctx, {
      ...target(req.params),
      reveal: req.query.reveal ?? false,
      revision: req.query.revision,
    });
    reply.header(REVISION_HEADER, String(revision));
    return { vars: listed };
  });

  route(app, ops.bulkUpsert, async (req, reply) =>
    withRevision(
      reply,
      await vars.bulkUpsert(req.ctx, {
        projectId: req.params.id,
        ...req.body,
        ...ifMatch(req),
        validate: req.query.validate,
      }),
    ),
  );

  route(app, ops.updateVar, async (req, reply) =>
    withRevision(
      reply,
      await vars.updateVar(req.ctx, {
        ...target(req.params),
        key: req.params.key,
        ...req.body,
        ...ifMatch(req),
        validate: req.query.validate,
      }),
    ),
  );

  route(app, ops.deleteVar, async (req, reply) => {
    withRevision(reply, await vars.deleteVar(req.ctx, { ...target(req.params), key: req.params.key, ...ifMatch(req) }));
    return reply.status(204).send(null);
  });

  route(app, ops.bulkDelete, async (req, reply) =>
    withRevision(
      reply,
      await vars.bulkDelete(req.ctx, { ...target(req.params), keys: req.body.keys, ...ifMatch(req) }),
    ),
  );

  route(app, ops.varHistory, async (req) => ({
    history: await vars.history(req.ctx, {
      ...target(req.params),
      key: req.params.key,
      reveal: req.query.reveal ?? false,
    }),
  }));

  route(app, ops.restoreVar, async (req, reply) =>
    withRevision(
      reply,
      await vars.restore(req.ctx, {
        ...target(req.params),
        key: req.params.key,
        versionId: req.body.versionId,
        ...ifMatch(req),
      }),
    ),
  );

  route(app, ops.listRevisions, async (req) =>
    revisions.listRevisions(req.ctx, { ...target(req.params), ...req.query }),
  );

  route(app, ops.rollback, async (req, reply) =>
    withRevision(
      reply,
      await revisions.rollback(req.ctx, { ...target(req.params), revision: req.body.revision, ...ifMatch(req) }),
    ),
  );
}

/** The environment a route's `:id` and `:env` name. */
const target = (p: { id: string; env: string }): EnvTarget => ({ projectId: p.id, env: p.env });
