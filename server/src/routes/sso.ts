import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance } from 'fastify';
import { route } from '../http/operation.js';
import { setSessionCookie } from '../http/session-cookie.js';
import type { Deps } from '../services/core/deps.js';
import * as sso from '../services/identity/sso.js';

/**
 * D63: single sign-on. The settings (Owner, dashboard session, D10) and the two browser navigations of a
 * sign-in, which answer redirects: start → the provider; callback → the dashboard, signed in (the session
 * cookie of ADR 0014) or with `?sso_error=<reason>`.
 */
export async function ssoRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  route(app, ops.getSso, async (req) => sso.getSso(req.ctx));

  route(app, ops.putSso, async (req) => sso.putSso(req.ctx, req.body));

  route(app, ops.deleteSso, async (req, reply) => {
    await sso.deleteSso(req.ctx);
    return reply.status(204).send(null);
  });

  route(app, ops.testSso, async (req) => sso.testSso(req.ctx, req.body));

  route(app, ops.ssoStart, async (req, reply) => {
    const { location, browser } = await sso.ssoStart(deps, {
      ...req.query,
      ip: req.ip,
      browser: req.cookies[sso.SSO_BROWSER_COOKIE],
    });
    // Lax, not Strict: the provider's redirect back is a cross-site navigation, and it must carry this.
    reply.setCookie(sso.SSO_BROWSER_COOKIE, browser, {
      httpOnly: true,
      sameSite: 'lax',
      secure: req.protocol === 'https' || deps.config.TRUST_PROXY,
      path: '/v1/auth/sso',
      maxAge: sso.SSO_FLOW_TTL_MS / 1000,
    });
    return reply.redirect(location, 302);
  });

  route(app, ops.ssoCallback, async (req, reply) => {
    const { location, token } = await sso.ssoCallback(deps, {
      query: req.query,
      browser: req.cookies[sso.SSO_BROWSER_COOKIE],
      onUnexpected: (e) => req.log.error({ err: e }, 'single sign-on callback failed'),
    });
    if (token) setSessionCookie(reply, token, req.protocol === 'https' || deps.config.TRUST_PROXY);
    return reply.redirect(location, 302);
  });
}
