import { ENV_NAME, endpoints } from '@svcenv/contract';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { Metrics } from '../lib/metrics.js';
import { loggablePath } from '../lib/redact.js';
import type { Ctx } from '../services/core/context.js';
import type { Deps } from '../services/core/deps.js';
import { type AuthMode, authenticate } from '../services/identity/authn.js';
import { projectIdOfSlug, projectRefKind } from '../services/projects/project-ref.js';
import { body, SECURITY_HEADERS } from './errors.js';
import { sessionCookieCredential, setSessionCookie } from './session-cookie.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which credential the route accepts; routes without it are public. */
    auth?: AuthMode;
    /** The answer carries a session JWT (`token`): it is also set as the dashboard's session cookie. */
    issuesSession?: boolean;
    /**
     * A read-only route of one environment (`:id`, `:env`: pull, export): its authorization rows are read
     * with the credential (services/identity/authn.ts `wanted`).
     */
    readsOneEnv?: boolean;
  }
  interface FastifyRequest {
    /** The caller of a route with `config.auth` (services/core/context.ts); routes without it have none. */
    ctx: Ctx;
  }
}

/**
 * The rules every request goes through, whatever its route: refused while draining or without Host,
 * authenticated according to `config.auth`, the project slug turned into its id, security headers and the
 * session cookie on the way out, one log line. Returns `drain`, which starts answering every request 503.
 */
export function addRequestHooks(
  app: FastifyInstance,
  opts: { config: Config; deps: Deps; metrics: Metrics | null; tls: boolean },
): { drain: () => void } {
  const { config, deps, metrics, tls } = opts;
  // Draining (main.ts, SIGTERM): every request, on a new or a kept-alive connection, is answered 503 with
  // `Connection: close` from here on, /readyz included (D52).
  let closing = false;
  const drain = () => {
    closing = true;
    // D43: held pulls are answered now (304 unless their body changed).
    deps.watch.drain();
  };
  app.addHook('preClose', (done) => {
    drain();
    done();
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Node would refuse an HTTP/1.1 request without Host itself, with an empty body and none of our headers
    // (http/server.ts turns that off); refused here in our shape instead.
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      reply.header('connection', 'close');
      return reply.status(400).send(body('VALIDATION', 'the Host header is required', 'host'));
    }
    if (closing) {
      // A keep-alive client must not hold a draining server open; the load balancer retries elsewhere.
      reply.header('connection', 'close');
      return reply.status(503).send(body('SERVER', 'the server is shutting down; retry shortly'));
    }
    const mode = request.routeOptions.config.auth;
    if (mode && mode !== 'none') {
      const header = request.headers.authorization ?? sessionCookieCredential(request, mode);
      const config = request.routeOptions.config;
      const params = request.params as { id?: unknown; env?: unknown };
      const by = config.readsOneEnv && typeof params.id === 'string' ? projectRefKind(params.id) : null;
      // Only a well-formed name is read with the credential: any other is the route's validation's to refuse
      // (400), and PostgreSQL would refuse one with a NUL character as text.
      const wanted =
        by && typeof params.id === 'string' && typeof params.env === 'string' && ENV_NAME.test(params.env)
          ? { project: params.id, by, env: params.env }
          : undefined;
      const { principal, epoch, snapshot } = await authenticate(deps.authn, header, mode, request.ip, wanted);
      request.ctx = { deps, principal, epoch, snapshot };
    }
  });
  // The hooks below are written with `done` rather than async: an async hook costs every request a promise
  // and a turn of the microtask queue, and these have nothing to wait for on the way of a pull by id.
  // D58: every /v1/projects/:id... route also takes the project's slug; it is turned into the id here, before
  // validation, so routes, services, audit rows and webhook payloads only ever see ids.
  app.addHook('preValidation', (request, _reply, done) => {
    const params = request.params as { id?: unknown } | undefined;
    if (typeof params?.id !== 'string' || !request.routeOptions.url?.startsWith(endpoints.getProject.path))
      return done();
    if (!request.ctx || projectRefKind(params.id) !== 'slug') return done();
    projectIdOfSlug(request.ctx, params.id).then((id) => {
      params.id = id;
      done();
    }, done);
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.routeOptions.config?.issuesSession && reply.statusCode < 300 && typeof payload === 'string') {
      const token = (JSON.parse(payload) as { token?: unknown }).token;
      if (typeof token === 'string') setSessionCookie(reply, token, tls || config.TRUST_PROXY);
    }
    reply.headers(SECURITY_HEADERS);
    if (tls) reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
    // Anything may carry values or tokens, so nothing is cached unless its route says otherwise (the
    // dashboard's files do). Not keyed on the path: `/%761/...` routes like `/v1/...`.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        path: loggablePath(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
    metrics?.observe(request.routeOptions.url, request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  return { drain };
}
