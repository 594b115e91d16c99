import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';

/** The channel every write of an environment's variables notifies, with the environment id (D43). */
export const REVISIONS_CHANNEL = 'svcenv_revisions';

/**
 * LISTENs on PostgreSQL for committed revisions of any environment, on a connection of its own (a pooled one
 * would be handed to queries). A lost connection is re-established, trying every second; meanwhile the watcher's
 * poll of the revisions covers the gap. Returns the function that stops listening.
 */
export async function listenForRevisions(
  databaseUrl: string,
  log: FastifyBaseLogger,
  onRevision: (environmentId: string) => void,
): Promise<() => Promise<void>> {
  let client: pg.Client | null = null;
  let stopped = false;
  let retry: NodeJS.Timeout | null = null;
  const connect = async () => {
    const c = new pg.Client({ connectionString: databaseUrl });
    c.on('notification', (m) => {
      if (m.channel === REVISIONS_CHANNEL && m.payload) onRevision(m.payload);
    });
    c.on('error', (err) => {
      log.warn({ err }, 'long-poll notification connection lost; reconnecting');
      c.end().catch(() => {});
      if (!stopped && client === c) {
        client = null;
        reconnect();
      }
    });
    try {
      await c.connect();
      await c.query(`listen ${REVISIONS_CHANNEL}`);
    } catch (e) {
      c.end().catch(() => {});
      throw e;
    }
    if (stopped) await c.end().catch(() => {});
    else client = c;
  };
  // Every second until it connects again: a database that restarts takes longer than one try.
  const reconnect = () => {
    retry = setTimeout(() => {
      connect().catch(() => {
        if (!stopped) reconnect();
      });
    }, 1000);
  };
  await connect();
  return async () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    await client?.end().catch(() => {});
  };
}
