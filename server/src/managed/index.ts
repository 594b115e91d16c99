import { isIP } from 'node:net';
import { type CidrRange, cidrContains, parseCidr, parseIp } from '@svcenv/contract/cidr';
import { isLinkLocalOrMetadata, type Resolver, systemResolver } from '../lib/net-guard.js';
import { bareHost, type EngineContext, PoolRegistry } from './common.js';
import {
  DEFAULT_TIMEOUTS,
  type Engine,
  type Engines,
  type EngineTimeouts,
  ManagedDbError,
  type ManagedKind,
} from './engine.js';
import { createMysqlEngine } from './mysql.js';
import { createPostgresEngine } from './postgres.js';
import { createRedisEngine } from './redis.js';

/**
 * The engines of one process (D70-D72): createEngines wires the three engines to one D70 address check and
 * one set of pools. The only module outside this folder's engines that knows there are three.
 */

export interface EnginesOptions {
  timeouts?: EngineTimeouts;
  /** CONNECTIONS_ALLOWED_CIDRS: when non-empty, every address a host resolves to must lie in one of them. */
  allowedCidrs?: readonly string[];
  resolve?: Resolver;
}

/** A host name as D70 takes it: an IP literal (IPv6 with or without brackets) or DNS labels. */
const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;

/**
 * D70's rules a host can be checked by without resolving it (a connection's create and PATCH): a host name
 * or IP literal, and not a link-local or cloud-metadata address in any of its forms. A message for the
 * 400, or null. The resolved addresses are checked at every use (`Engines.checkHost`).
 */
export function checkHostSyntax(host: string): string | null {
  const bare = bareHost(host);
  if (isIP(bare) === 0 && !HOST_NAME.test(host)) return 'host must be a host name or an IP address';
  if (isIP(bare) !== 0 && isLinkLocalOrMetadata(bare)) {
    return 'host must not be a link-local or cloud metadata address (169.254.0.0/16, fe80::/10, fd00:ec2::254)';
  }
  return null;
}

/**
 * Whether a host is this machine (`localhost`, 127.0.0.0/8, ::1, their IPv4-mapped forms): D70 allows
 * `tls: {mode: "disable"}` only for these unless CONNECTIONS_ALLOW_PLAIN is set.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = bareHost(host).toLowerCase().replace(/\.$/, '');
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  const ip = parseIp(bare);
  if (!ip) return false;
  if (ip.bytes.length === 4) return ip.bytes[0] === 127;
  return ip.bytes.every((b, i) => b === (i === 15 ? 1 : 0));
}

/** CONNECTIONS_ALLOWED_CIDRS entries as ranges; throws on one that does not parse (config refuses it first). */
export function parseAllowedCidrs(entries: readonly string[]): CidrRange[] {
  return entries.map((entry) => {
    const range = parseCidr(entry.trim());
    if (!range) throw new Error(`not an address range: ${entry}`);
    return range;
  });
}

export function createEngines(opts: EnginesOptions = {}): Engines {
  const timeouts = opts.timeouts ?? DEFAULT_TIMEOUTS;
  const allowed = parseAllowedCidrs(opts.allowedCidrs ?? []);
  const resolve = opts.resolve ?? systemResolver;
  const pools = new PoolRegistry();

  /**
   * D70 at the moment of use. A name whose answers include one refused address is refused as a whole (the
   * connection could otherwise be steered to it). The first IPv4 answer is used, else the first IPv6 one:
   * the order Node's resolver used before 17, which suits databases that listen on IPv4 only.
   */
  async function checkHost(host: string): Promise<string> {
    const bare = bareHost(host);
    const at = (address: string) => (address === bare ? '' : `at ${address}, `);
    let addresses: string[];
    if (isIP(bare) !== 0) addresses = [bare];
    else {
      try {
        addresses = (await resolve(bare)).map((a) => a.address);
      } catch {
        throw new ManagedDbError('connect', `host not found (${host})`);
      }
      if (addresses.length === 0) throw new ManagedDbError('connect', `host not found (${host})`);
    }
    for (const address of addresses) {
      if (isLinkLocalOrMetadata(address)) {
        throw new ManagedDbError(
          'address',
          `${host} is ${at(address)}a link-local or cloud metadata address (refused, D70)`,
        );
      }
      if (allowed.length > 0) {
        const ip = parseIp(address.replace(/%.*$/, ''));
        if (!ip || !allowed.some((range) => cidrContains(range, ip))) {
          throw new ManagedDbError(
            'address',
            `${host} is ${at(address)}outside CONNECTIONS_ALLOWED_CIDRS (refused, D70)`,
          );
        }
      }
    }
    return addresses.find((a) => isIP(a) === 4) ?? addresses[0]!;
  }

  const ctx: EngineContext = { timeouts, checkHost, pools };
  const engines: Record<ManagedKind, Engine> = {
    postgres: createPostgresEngine(ctx),
    mysql: createMysqlEngine(ctx),
    redis: createRedisEngine(ctx),
  };

  return {
    engine: (kind) => engines[kind],
    checkHost,
    forget: (connectionId) => pools.forget(connectionId),
    close: () => pools.close(),
  };
}

export { fillPlaceholders, makePassword, makeUsername } from './credentials.js';
export * from './engine.js';
