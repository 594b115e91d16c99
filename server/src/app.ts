import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyCookie from '@fastify/cookie';
import fastifySwagger from '@fastify/swagger';
import * as c from '@svcenv/contract';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { type Config, isTrustedProxy, proxyList } from './config.js';
import type { DbHandle } from './db/index.js';
import {
  body,
  clientErrorHandler,
  errorHandler,
  frameworkErrorHandler,
  SECURITY_HEADERS,
  unmetExpectationHandler,
} from './http/errors.js';
import { sessionCookieCredential, setSessionCookie } from './http/session-cookie.js';
import { EMAIL_JOB, emailJob } from './jobs/email.js';
import { registerEventJobs } from './jobs/events.js';
import { JobQueue } from './jobs/queue.js';
import type { Clock } from './lib/clock.js';
import { deriveKey, ProjectKeyring, safeEqual } from './lib/crypto.js';
import { validation } from './lib/errors.js';
import { logMailer, smtpMailer } from './lib/mail.js';
import { Metrics } from './lib/metrics.js';
import type { Resolver } from './lib/net-guard.js';
import { RateLimiter, RedisLimitStore } from './lib/rate-limit.js';
import { fieldNameLike, loggablePath } from './lib/redact.js';
import { authRoutes } from './routes/auth.js';
import { changeRequestRoutes } from './routes/change-requests.js';
import { cliReleaseRoutes } from './routes/cli-releases.js';
import { healthRoutes } from './routes/health.js';
import { meRoutes } from './routes/me.js';
import { projectMemberRoutes } from './routes/project-members.js';
import { projectRoutes } from './routes/projects.js';
import { pullRoutes } from './routes/pull.js';
import { tokenRoutes } from './routes/tokens.js';
import { variableRoutes } from './routes/variables.js';
import { webRoutes } from './routes/web.js';
import { webhookRoutes } from './routes/webhooks.js';
import { workspaceRoutes } from './routes/workspace.js';
import { AuditBatcher } from './services/audit.js';
import { type AuthMode, authenticate, authnQueries, bearer, JwtCodec, VerifiedTokenCache } from './services/authn.js';
import type { Ctx } from './services/context.js';
import type { Deps } from './services/deps.js';
import { projectIdOf } from './services/project-ref.js';
import { RenderCache } from './services/pull.js';
import { bindLegacyValues } from './services/value-binding.js';
import { EnvWatch } from './services/watch.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which credential the route accepts; routes without it are public. */
    auth?: AuthMode;
    /** The answer carries a session JWT (`token`): it is also set as the dashboard's session cookie. */
    issuesSession?: boolean;
  }
  interface FastifyRequest {
    /** The caller of a route with `config.auth` (services/context.ts); routes without it have none. */
    ctx: Ctx;
  }
}

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The CLI version served by `/v1/cli/latest`: the one the binaries in dist/cli were built from. */
function cliVersion(): string {
  return (JSON.parse(readFileSync(join(repoRoot, 'cli', 'package.json'), 'utf8')) as { version: string }).version;
}

export interface AppOptions {
  config: Config;
  db: DbHandle;
  clock: Clock;
  masterKey: Buffer;
  /** Where the JSON log goes (default stdout); tests capture it to check that no value leaks. */
  logStream?: NodeJS.WritableStream;
  /** DNS for webhook targets (D5); tests may replace it, production uses the system resolver. */
  resolve?: Resolver;
}

/**
 * Refused with 413 before parsing (ADR 0002). D24 bounds items (5,000) and values (64 KiB) separately; both at
 * their maximum would be a ~330 MB body, held whole in memory as text and as objects. 16 MiB carries 5,000
 * values of ~3 KB, or 250 of the full 64 KiB.
 */
const BODY_LIMIT = 16 * 1024 * 1024;

export function buildDeps(opts: AppOptions, log: FastifyBaseLogger, metrics: Metrics | null = null): Deps {
  const { db } = opts.db;
  const jobs = new JobQueue({
    db,
    dialect: opts.db.dialect,
    clock: opts.clock,
    sealKey: deriveKey(opts.masterKey, 'job-payload'),
    log,
  });
  const mailer = opts.config.SMTP_URL ? smtpMailer(opts.config.SMTP_URL, opts.config.MAIL_FROM) : logMailer(log);
  jobs.register({ [EMAIL_JOB]: emailJob(mailer) });
  const webhooks = registerEventJobs({
    db,
    clock: opts.clock,
    jobs,
    config: opts.config,
    masterKey: opts.masterKey,
    resolve: opts.resolve,
  });
  const lastTouch = new Map<string, number>();
  return {
    config: opts.config,
    db,
    dialect: opts.db.dialect,
    clock: opts.clock,
    keyring: new ProjectKeyring(opts.masterKey),
    auditBatcher: new AuditBatcher(
      metrics ? metrics.timeAuditCommits(opts.db.insertAuditRows) : (rows) => opts.db.insertAuditRows(rows),
      opts.db.dialect === 'sqlite' ? 1 : 4,
    ),
    renderCache: new RenderCache(),
    watch: new EnvWatch({
      db,
      dialect: opts.db.dialect,
      databaseUrl: opts.config.DATABASE_URL,
      log,
      maxHeld: opts.config.LONGPOLL_MAX_HELD,
      maxPerToken: opts.config.LONGPOLL_MAX_PER_TOKEN,
    }),
    jobs,
    webhooks,
    limiter: new RateLimiter(
      opts.clock,
      opts.config.REDIS_URL ? new RedisLimitStore(opts.config.REDIS_URL, opts.config.REDIS_KEY_PREFIX) : null,
      log,
    ),
    accountKeys: {
      mfaSecret: deriveKey(opts.masterKey, 'mfa-totp-secret'),
      backupCode: deriveKey(opts.masterKey, 'mfa-backup-code'),
    },
    authn: {
      db,
      clock: opts.clock,
      jwt: new JwtCodec(deriveKey(opts.masterKey, 'jwt-hs256')),
      queries: authnQueries(db),
      tokenCache: new VerifiedTokenCache(),
      // D33: lastUsedAt may lag by up to a minute, so a busy token costs one write a minute, not one a request.
      touchToken(id, lastUsedAt) {
        const now = opts.clock.now().getTime();
        const last = Math.max(lastTouch.get(id) ?? 0, lastUsedAt ? Date.parse(lastUsedAt) : 0);
        if (now - last < 60_000) return;
        lastTouch.set(id, now);
        db.updateTable('access_tokens')
          .set({ last_used_at: new Date(now).toISOString() })
          .where('id', '=', id)
          .execute()
          .catch(() => lastTouch.delete(id));
      },
    },
  };
}

/**
 * The OpenAPI view of a route: its own schemas, plus what every route shares but does not declare at run
 * time (declaring them would put error bodies through the response serializer): the error body on 4XX and
 * 5XX, the pull's flat 422, and no credential on the public routes.
 */
const documentRoute: typeof jsonSchemaTransform = (input) => {
  const { schema, route } = input;
  const response: Record<string, unknown> = {
    ...(schema.response as Record<string, unknown> | undefined),
    '4XX': c.errorBody.describe('Error: `field` names the offending field, or is empty'),
    '5XX': c.errorBody.describe('Server error, with the request id in the message'),
  };
  if (route.url.endsWith('/pull')) response['422'] = c.flatReferenceErrorBody.describe('A reference cannot resolve');
  const auth = route.config?.auth;
  const security = !auth || auth === 'none' ? { security: [] } : {};
  const out = jsonSchemaTransform({ ...input, schema: { ...schema, ...security, response } });
  // zod renders null for OpenAPI 3.0 as a nullable string; @fastify/swagger documents a 204 without content
  // only for `type: 'null'`.
  const documented = (out.schema as { response?: Record<string, unknown> }).response;
  if (documented?.['204']) documented['204'] = { type: 'null', description: 'No Content' };
  return out;
};

/**
 * The dotted path of the first string or key holding a NUL character, or null. A key that is neither an
 * index nor name-shaped (a pasted value or credential) is written `(unknown)`, as for an unknown field.
 */
function pathOfNul(value: unknown, path: string[]): string | null {
  if (typeof value === 'string') return value.includes('\0') ? path.join('.') : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\0')) return path.join('.');
    const found = pathOfNul(v, [...path, /^\d+$/.test(k) || fieldNameLike(k) ? k : '(unknown)']);
    if (found !== null) return found;
  }
  return null;
}

/**
 * D4/D14: trust exactly one hop, the TLS-terminating proxy we are connected to: with TRUSTED_PROXIES only
 * when the peer is one of those addresses, else whoever the peer is.
 */
function trustFirstHop(trusted: string | undefined): (address: string, hop: number) => boolean {
  if (!trusted) return (_address, hop) => hop === 0;
  const list = proxyList(trusted);
  return (address, hop) => hop === 0 && isTrustedProxy(list, address);
}

export async function buildApp(opts: AppOptions): Promise<{ app: FastifyInstance; deps: Deps; drain: () => void }> {
  const { config } = opts;
  const https = config.TLS_CERT_FILE
    ? {
        cert: readFileSync(config.TLS_CERT_FILE),
        key: readFileSync(config.TLS_KEY_FILE!),
        minVersion: 'TLSv1.2' as const,
        requireHostHeader: false,
      }
    : null;

  const app = Fastify({
    // Node would refuse an HTTP/1.1 request without Host itself, with an empty body and none of our headers;
    // the onRequest hook below refuses it in our shape instead.
    ...(https ? { https } : { http: { requireHostHeader: false } }),
    logger: {
      level: config.LOG_LEVEL,
      ...(opts.logStream ? { stream: opts.logStream } : {}),
      // Requests are logged without bodies, headers or query strings (which could carry values or tokens).
      serializers: {
        req: (req) => ({ method: req.method, path: loggablePath(req.url), remoteAddress: req.ip }),
        res: (res) => ({ statusCode: res.statusCode }),
      },
    },
    // One line per request is written by the onResponse hook below, not Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    // D4/D14: trust exactly one hop, the TLS-terminating proxy we are connected to, so the client address is
    // the X-Forwarded-For entry that proxy appended; `true` would take the left-most entry, which the client
    // writes itself and could change on every request to escape the login rate limit.
    trustProxy: config.TRUST_PROXY ? trustFirstHop(config.TRUSTED_PROXIES) : false,
    bodyLimit: BODY_LIMIT,
    // Requests that arrive while the server drains get a 503 from the onRequest hook below, in our shape.
    return503OnClosing: false,
    // Errors Fastify or Node answer before our routes run get the spec's error shape too.
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 512 },
  }) as unknown as FastifyInstance;
  app.server.on('checkExpectation', unmetExpectationHandler);
  // Before the hooks below, which read the session cookie (issue 18: a dashboard session in every tab).
  await app.register(fastifyCookie);
  const metrics = config.METRICS_TOKEN ? new Metrics(opts.db.db) : null;
  const deps = buildDeps(opts, app.log, metrics);
  const rebound = await bindLegacyValues(deps);
  if (rebound > 0) app.log.info({ values: rebound }, 'values re-sealed with their role bound (one-time upgrade)');
  app.addHook('onClose', () => deps.limiter.close());
  await deps.watch.start();
  app.addHook('onClose', () => deps.watch.stop());
  metrics?.trackHeldPulls(() => deps.watch.size);
  await deps.limiter.ready();

  // An empty body sent with `Content-Type: application/json` (some HTTP clients add the header to every
  // request) counts as no body: a DELETE or an input-less POST then gets its real answer, and a route that
  // needs a body still gets 400 VALIDATION from its schema. Anything else goes to Fastify's own parser,
  // which refuses `__proto__` and `constructor.prototype` keys.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    if (text === '') return done(null, null);
    parseJson(request, text as string, (err, parsed) => {
      // A NUL (`\u0000`) can be neither stored in a PostgreSQL text column nor passed in an environment
      // variable: refused in every field, on every database, before any route sees it. The walk runs only
      // when the text holds the escape at all.
      const nulAt = !err && (text as string).includes('\\u0000') ? pathOfNul(parsed, []) : null;
      if (nulAt !== null) return done(validation(nulAt || 'body', 'text may not contain a NUL character'), undefined);
      done(err, parsed);
    });
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req, reply) =>
    reply.status(404).send(body('NOT_FOUND', `no route for ${req.method} ${loggablePath(req.url)}`)),
  );

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
      const { principal, epoch } = await authenticate(deps.authn, header, mode);
      request.ctx = { deps, principal, epoch };
    }
  });
  // D58: every /v1/projects/:id... route also takes the project's slug; it is turned into the id here, before
  // validation, so routes, services, audit rows and webhook payloads only ever see ids.
  app.addHook('preValidation', async (request) => {
    const params = request.params as { id?: unknown } | undefined;
    if (typeof params?.id !== 'string' || !request.routeOptions.url?.startsWith(c.endpoints.getProject.path)) return;
    if (request.ctx) params.id = await projectIdOf(request.ctx, params.id);
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.routeOptions.config?.issuesSession && reply.statusCode < 300 && typeof payload === 'string') {
      const token = (JSON.parse(payload) as { token?: unknown }).token;
      if (typeof token === 'string') setSessionCookie(reply, token, !!https || config.TRUST_PROXY);
    }
    reply.headers(SECURITY_HEADERS);
    if (https) reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
    // Anything may carry values or tokens, so nothing is cached unless its route says otherwise (the
    // dashboard's files do). Not keyed on the path: `/%761/...` routes like `/v1/...`.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
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
  });

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'svcenv API', version: '1.0.0', description: 'Configuration variables and secrets.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: documentRoute,
  });

  await app.register(healthRoutes, { deps });
  await app.register(authRoutes, { deps, prefix: '/v1' });
  await app.register(meRoutes, { prefix: '/v1' });
  await app.register(projectRoutes, { prefix: '/v1' });
  await app.register(variableRoutes, { prefix: '/v1' });
  await app.register(changeRequestRoutes, { prefix: '/v1' });
  await app.register(pullRoutes, { prefix: '/v1' });
  await app.register(tokenRoutes, { prefix: '/v1' });
  await app.register(webhookRoutes, { prefix: '/v1' });
  await app.register(workspaceRoutes, { prefix: '/v1' });
  await app.register(projectMemberRoutes, { prefix: '/v1' });
  // D39/D41: the CLI binaries built by `npm run build:cli` next to this server.
  await app.register(cliReleaseRoutes, { distDir: join(repoRoot, 'dist', 'cli'), version: cliVersion() });
  if (config.BENCH_FLOOR_ROUTE) {
    const floor = `${'x'.repeat(2047)}\n`;
    app.get('/bench/floor', { schema: { hide: true } }, async (_req, reply) =>
      reply.type('text/plain; charset=utf-8').send(floor),
    );
  }
  app.get(c.endpoints.openapi.path, { schema: { hide: true } }, async () => app.swagger());
  {
    const expected = config.METRICS_TOKEN;
    // D52: an operator's scrape endpoint, outside the API (not in the OpenAPI document, no user credential).
    // Without METRICS_TOKEN it answers 404 itself, so the dashboard's catch-all route does not serve it a page.
    app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
      if (!metrics || !expected) return reply.status(404).send(body('NOT_FOUND', 'no route for GET /metrics'));
      const given = bearer(req.headers.authorization);
      if (!given || !safeEqual(given, expected)) {
        return reply.status(401).send(body('UNAUTHORIZED', 'metrics need Authorization: Bearer <METRICS_TOKEN>'));
      }
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  }
  await app.register(webRoutes, { distDir: join(repoRoot, 'web', 'dist') }); // the dashboard (issue 7)
  return { app, deps, drain };
}
