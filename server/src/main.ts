import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { migrate, openDb } from './db/index.js';
import { systemClock } from './lib/clock.js';
import { logSink } from './lib/log-sink.js';
import { loadMasterKey } from './lib/master-key.js';
import { nodeSupported, unsupportedNodeMessage } from './lib/node-version.js';

/** Starts the API server: config → master key → database (migrated) → HTTP; stops gracefully on SIGTERM. */
async function main(): Promise<void> {
  if (!nodeSupported(process.versions.node)) {
    process.stderr.write(`${unsupportedNodeMessage(process.versions.node)}\n`);
    process.exit(1);
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  const master = loadMasterKey({
    masterKey: config.MASTER_KEY,
    dataDir: config.DATA_DIR,
    embedded: !config.DATABASE_URL,
  });
  let log: { warn(o: object, msg: string): void } | null = null;
  const db = openDb({
    dataDir: config.DATA_DIR,
    databaseUrl: config.DATABASE_URL,
    onConnectionLost: (reason) =>
      log?.warn(
        { reason },
        'an idle PostgreSQL connection was closed by the database; a new one is opened on next use',
      ),
  });
  await migrate(db);
  const logStream = logSink();
  const { app, deps, drain } = await buildApp({ config, db, clock: systemClock, masterKey: master.key, logStream });
  log = app.log;
  if (master.source === 'file') {
    // D1: one warning, never the key itself.
    app.log.warn(
      { dataDir: config.DATA_DIR, generated: master.generated },
      'using the master key file in DATA_DIR; in production supply MASTER_KEY from a secret store instead',
    );
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    // First a grace period in which every request, on any connection, is answered 503 with `Connection:
    // close`: a keep-alive client is told of the stop by an answer instead of finding its connection reset
    // (closing an idle keep-alive connection races with the client's next request on it).
    drain();
    await new Promise((resolve) => setTimeout(resolve, config.DRAIN_GRACE_MS));
    // Then stop accepting, let in-flight requests finish, flush audit rows, and close the database. A
    // keep-alive connection that goes idle only after close() began would otherwise hold the server open
    // until its keep-alive timeout (72 s), so those are closed as they idle.
    const idle = setInterval(() => app.server.closeIdleConnections(), 50);
    await app.close();
    clearInterval(idle);
    await deps.jobs.stop();
    await deps.engines.close();
    await deps.auditBatcher.drain();
    await deps.writeGroup.drain();
    await db.close();
    app.log.info('stopped');
    logStream.flushSync();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  const address = await app.listen({ host: config.HOST, port: config.PORT });
  deps.jobs.start();
  app.log.info({ address, storage: db.dialect, node: process.versions.node }, 'svcenv server listening');
}

main().catch((e) => {
  process.stderr.write(`svcenv server failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
