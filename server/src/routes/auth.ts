import * as c from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { login, sessionUser, signup, switchWorkspace, verifyMfaLogin } from '../services/accounts.js';
import type { Deps } from '../services/deps.js';
import { resendVerification, verifyEmail } from '../services/email-verification.js';
import { limitLoginByIp } from '../services/limits.js';

export async function authRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const tags = ['auth'];

  app.post(
    '/auth/signup',
    { schema: { tags, body: c.signupBody, response: { 201: c.authResponse } } },
    async (req, reply) => reply.status(201).send(await signup(deps, req.body)),
  );

  app.post(
    '/auth/login',
    {
      // D14: counted before the body is even parsed, so every request from the address counts.
      onRequest: async (req) => limitLoginByIp(deps.limiter, req.ip),
      schema: { tags, body: c.loginBody, response: { 200: c.loginResponse } },
    },
    async (req) => login(deps, req.body),
  );

  app.post(
    '/auth/verify-mfa',
    { schema: { tags, body: c.verifyMfaBody, response: { 200: c.verifyMfaResponse } } },
    async (req) => verifyMfaLogin(deps, req.body),
  );

  app.post(
    '/auth/verify-email',
    { schema: { tags, body: c.verifyEmailBody, response: { 200: c.verifyEmailResponse } } },
    async (req) => verifyEmail(deps, req.body.token),
  );

  app.post(
    '/auth/resend-verification',
    { config: { auth: 'jwt' }, schema: { tags, body: c.emptyBody, response: { 202: c.resendVerificationResponse } } },
    async (req, reply) => reply.status(202).send(await resendVerification(deps, req.principal)),
  );

  app.get(
    '/auth/session',
    { config: { auth: 'jwt' }, schema: { tags, response: { 200: c.sessionResponse } } },
    async (req) => ({ user: await sessionUser(deps.db, req.principal.userId, req.principal.workspaceId) }),
  );

  app.post(
    '/auth/switch-workspace',
    {
      config: { auth: 'jwt' },
      schema: { tags, body: c.switchWorkspaceBody, response: { 200: c.switchWorkspaceResponse } },
    },
    async (req) => switchWorkspace(deps, req.principal, req.body.workspaceId),
  );
}
