# svcenv server image. Build: `docker build -t svcenv .` (podman: `podman build --format docker -t svcenv .`, as
# the OCI format has no HEALTHCHECK). Run (docs/deploy/README.md):
#   docker run -d -p 8080:8080 -v svcenv-data:/data -e TRUST_PROXY=true -e MASTER_KEY=... svcenv
# The server listens on 0.0.0.0 in the container, which D4 allows only with TLS or behind a TLS proxy: set
# TRUST_PROXY=true (a proxy terminates TLS in front) or TLS_CERT_FILE and TLS_KEY_FILE (mounted files);
# with neither it exits at start-up and says so. server/test/deploy.test.ts checks this file.

# Node 24 LTS (the server supports 22 and 24; CI runs on 24, the version package.json pins).
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: the full install, whose postinstall builds the dashboard (web/dist) and the server (dist/server)
FROM ${NODE_IMAGE} AS build
# better-sqlite3 (Node-API) and @node-rs/* ship prebuilt binaries; the toolchain builds one when none fits.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
# The image's own Node runs everything, so the install must not fetch the Node that the root package pins for
# machines without Node 24 (the `node` package, whose preinstall downloads it): scripts are skipped, then the
# two that matter run: esbuild's binary check and the root postinstall (it builds web/dist and dist/server).
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild esbuild \
 && npm run postinstall
# The CLI executables served at /v1/cli/download (D39; bun fetches its runtimes from the npm registry).
# --build-arg WITH_CLI=false leaves them out; the server then answers those routes with 404.
ARG WITH_CLI=true
RUN mkdir -p dist/cli && if [ "$WITH_CLI" = "true" ]; then npm run build:cli; fi
# Only production dependencies go on; the native addons stay built for this platform.
RUN npm prune --omit=dev --no-audit --no-fund

# ---- runtime: Node, production node_modules, the built server, the dashboard and the CLI executables
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8080
RUN groupadd --system --gid 10001 svcenv \
 && useradd --system --uid 10001 --gid svcenv --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin svcenv \
 && mkdir -p /data && chown svcenv:svcenv /data && chmod 0700 /data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/server ./dist/server
COPY --from=build /app/dist/cli ./dist/cli
COPY --from=build /app/web/dist ./web/dist
# The server reads the CLI's version from here (/v1/cli/latest).
COPY --from=build /app/cli/package.json ./cli/package.json
USER svcenv
VOLUME ["/data"]
EXPOSE 8080
# D52: ready once migrations ran, 503 while draining. HTTPS when TLS_CERT_FILE is set (its own certificate).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "require(process.env.TLS_CERT_FILE ? 'node:https' : 'node:http').get({ host: '127.0.0.1', port: process.env.PORT || 8080, path: '/readyz', rejectUnauthorized: false, timeout: 4000 }, (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1)).on('timeout', () => process.exit(1))"]
# SIGTERM (docker stop) drains for DRAIN_GRACE_MS, then finishes in-flight requests; give it time:
# docker stop -t 30, or stop_grace_period in compose.
CMD ["node", "dist/server/main.mjs"]
