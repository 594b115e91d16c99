import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../services/deps.js';
import * as me from '../services/me.js';
import * as mfa from '../services/mfa.js';

/** D12: the signed-in user's account and two-factor settings; JWT only (D10). */
export async function meRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const config = { auth: 'jwt' as const };
  const tags = ['me'];

  app.get('/me', { config, schema: { tags, response: { 200: c.meResponse } } }, async (req) =>
    me.getMe(deps, req.principal),
  );

  app.patch('/me', { config, schema: { tags, body: c.updateMeBody, response: { 200: c.meResponse } } }, async (req) =>
    me.updateMe(deps, req.principal, req.body),
  );

  app.post(
    '/me/password',
    { config, schema: { tags, body: c.changePasswordBody, response: { 204: c.noContent } } },
    async (req, reply) => {
      await me.changePassword(deps, req.principal, req.body);
      return reply.status(204).send(null);
    },
  );

  app.get('/me/workspaces', { config, schema: { tags, response: { 200: c.myWorkspacesResponse } } }, async (req) =>
    me.myWorkspaces(deps, req.principal),
  );

  app.post(
    '/me/mfa/setup',
    { config, schema: { tags, body: c.emptyBody, response: { 200: c.mfaSetupResponse } } },
    async (req) => mfa.setupMfa(deps, req.principal),
  );

  app.post(
    '/me/mfa/enable',
    { config, schema: { tags, body: c.mfaCodeBody, response: { 200: c.backupCodesResponse } } },
    async (req) => mfa.enableMfa(deps, req.principal, req.body.code),
  );

  app.post(
    '/me/mfa/disable',
    { config, schema: { tags, body: c.mfaCodeBody, response: { 204: c.noContent } } },
    async (req, reply) => {
      await mfa.disableMfa(deps, req.principal, req.body.code);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/me/mfa/backup-codes',
    { config, schema: { tags, body: c.mfaCodeBody, response: { 200: c.backupCodesResponse } } },
    async (req) => mfa.regenerateBackupCodes(deps, req.principal, req.body.code),
  );
}
