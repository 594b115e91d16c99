/** Vitest globalSetup: the dashboard tests load the built app from the real server, so build it when stale. */
import { ensureBuilt } from '../scripts/ensure-built.mjs';

export default async function setup(): Promise<void> {
  await ensureBuilt();
}
