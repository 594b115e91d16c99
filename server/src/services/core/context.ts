import type { RowSnapshot } from '../../db/epoch-cache.js';
import type { Deps } from './deps.js';
import type { Principal } from './principal.js';

/**
 * One authenticated request as the services see it: the wiring, who is asking, and the moment their
 * credential was checked. Every service that acts for a caller takes it first, and its input second.
 */
export interface Ctx {
  deps: Deps;
  principal: Principal;
  /**
   * The epoch-cache counter value (db/epoch-cache.ts) that authentication read, or undefined (no cache:
   * PostgreSQL, or a credential checked without it). A read-only request (pull, export) passes it to its
   * later lookups, which then see the state its authentication saw, as if every read had been made at
   * once; each counter read costs tens of microseconds under load. A request that writes must not, or its
   * reads after its own write would miss that write.
   */
  epoch: number | undefined;
  /**
   * A read-only request's authorization rows, read with its credential in one query where no epoch cache
   * serves them (PostgreSQL; db/epoch-cache.ts `RowSnapshot`). Like `epoch`, only read-only requests use it.
   */
  snapshot?: RowSnapshot | undefined;
}

/** What authentication establishes: the principal, and the counter value (or the rows) its rows were read at. */
export interface Authenticated {
  principal: Principal;
  epoch: number | undefined;
  snapshot?: RowSnapshot | undefined;
}

/** A context for work done on behalf of someone without a request (sign-in, before any session). */
export const actingAs = (deps: Deps, principal: Principal): Ctx => ({ deps, principal, epoch: undefined });
