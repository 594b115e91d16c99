import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyCookie from '@fastify/cookie';
import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { DestinationStream } from 'pino';
import { parseJsonBodies } from './http/body.js';
import { errorHandler, notFoundHandler, unmetExpectationHandler } from './http/errors.js';
import { addRequestHooks } from './http/hooks.js';
import { documentRoutes } from './http/openapi.js';
import { serverOptions, tlsOptions } from './http/server.js';
import { Metrics } from './lib/metrics.js';
import { accessRoutes } from './routes/access.js';
import { adminRoutes } from './routes/admin.js';
import { auditStreamRoutes } from './routes/audit-streams.js';
import { authRoutes } from './routes/auth.js';
import { benchFloorRoutes } from './routes/bench.js';
import { changeRequestRoutes } from './routes/change-requests.js';
import { cliReleaseRoutes } from './routes/cli-releases.js';
import { credentialRoutes } from './routes/credentials.js';
import { healthRoutes } from './routes/health.js';
import { identityRoutes } from './routes/identities.js';
import { meRoutes } from './routes/me.js';
import { metricsRoutes } from './routes/metrics.js';
import { openApiRoutes } from './routes/openapi.js';
import { projectMemberRoutes } from './routes/project-members.js';
import { projectRoutes } from './routes/projects.js';
import { pullRoutes } from './routes/pull.js';
import { ssoRoutes } from './routes/sso.js';
import { tokenRoutes } from './routes/tokens.js';
import { variableRoutes } from './routes/variables.js';
import { webRoutes } from './routes/web.js';
import { webhookRoutes } from './routes/webhooks.js';
import { workspaceRoutes } from './routes/workspace.js';
import type { Deps } from './services/core/deps.js';
import { buildDeps, startDeps, type WiringOptions } from './wiring.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The CLI version served by `/v1/cli/latest`: the one the binaries in dist/cli were built from. */
function cliVersion(): string {
  return (JSON.parse(readFileSync(join(repoRoot, 'cli', 'package.json'), 'utf8')) as { version: string }).version;
}

export interface AppOptions extends WiringOptions {
  /**
   * Where the JSON log goes (main.ts: stdout through lib/log-sink.ts); tests capture it to check that no
   * value leaks.
   */
  logStream?: DestinationStream;
}

/** The HTTP server: its settings, the dependencies, the rules every request follows, then every route. */
export async function buildApp(opts: AppOptions): Promise<{ app: FastifyInstance; deps: Deps; drain: () => void }> {
  const { config } = opts;
  const https = tlsOptions(config);
  const app = Fastify(serverOptions(config, https, opts.logStream)) as unknown as FastifyInstance;
  app.server.on('checkExpectation', unmetExpectationHandler);
  // Before the hooks, which read the session cookie (a dashboard session in every tab, ADR 0014).
  await app.register(fastifyCookie);
  const metrics = config.METRICS_TOKEN ? new Metrics(opts.db.db) : null;
  const deps = buildDeps(opts, app.log, metrics);
  await startDeps(app, deps, metrics);

  parseJsonBodies(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  const { drain } = addRequestHooks(app, { config, deps, metrics, tls: https !== null });
  await documentRoutes(app);

  await app.register(healthRoutes, { deps });
  await app.register(authRoutes, { deps, prefix: '/v1' });
  await app.register(meRoutes, { prefix: '/v1' });
  await app.register(projectRoutes, { prefix: '/v1' });
  await app.register(variableRoutes, { prefix: '/v1' });
  await app.register(changeRequestRoutes, { prefix: '/v1' });
  await app.register(credentialRoutes, { prefix: '/v1' });
  await app.register(pullRoutes, { prefix: '/v1' });
  await app.register(tokenRoutes, { prefix: '/v1' });
  await app.register(webhookRoutes, { prefix: '/v1' });
  await app.register(identityRoutes, { deps, prefix: '/v1' });
  await app.register(ssoRoutes, { deps, prefix: '/v1' });
  await app.register(auditStreamRoutes, { prefix: '/v1' });
  await app.register(workspaceRoutes, { prefix: '/v1' });
  await app.register(projectMemberRoutes, { prefix: '/v1' });
  await app.register(accessRoutes, { prefix: '/v1' });
  await app.register(adminRoutes, { prefix: '/v1' });
  // D39/D41: the CLI binaries built by `npm run build:cli` next to this server.
  await app.register(cliReleaseRoutes, { distDir: join(repoRoot, 'dist', 'cli'), version: cliVersion() });
  if (config.BENCH_FLOOR_ROUTE) await app.register(benchFloorRoutes);
  await app.register(openApiRoutes);
  await app.register(metricsRoutes, { metrics, token: config.METRICS_TOKEN });
  await app.register(webRoutes, { distDir: join(repoRoot, 'web', 'dist') }); // the dashboard
  return { app, deps, drain };
}
