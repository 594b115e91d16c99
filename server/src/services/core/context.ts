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
}

/** What authentication establishes: the principal, and the counter value its rows were read at. */
export interface Authenticated {
  principal: Principal;
  epoch: number | undefined;
}

/** A context for work done on behalf of someone without a request (sign-in, before any session). */
export const actingAs = (deps: Deps, principal: Principal): Ctx => ({ deps, principal, epoch: undefined });
