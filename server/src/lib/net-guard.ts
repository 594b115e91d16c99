import { lookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { validation } from './errors.js';

/**
 * D5 SSRF guard for webhook targets: by default a webhook may only reach public unicast addresses. The
 * check runs at create/update and again at every delivery on the addresses DNS returns at that moment,
 * and the delivery then connects to exactly the address that was checked (jobs/webhook.ts), so a name
 * that re-resolves to a private address between check and connect (DNS rebinding) cannot slip through.
 */
// Two lists: node's BlockList maps IPv4 into ::ffff:0:0/96, so one list would let that IPv6 rule match
// every IPv4 address.
const blocked4 = new BlockList();
const blocked6 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked4.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::ffff:0:0', 96], // IPv4-mapped: never a legitimate public answer, and it would wrap any IPv4 address
  ['64:ff9b::', 96], // NAT64, wraps IPv4
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, ...)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4, wraps IPv4
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked6.addSubnet(net, prefix, 'ipv6');
}

/** True for a public unicast address; false for loopback, private, link-local, reserved and the like. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return family === 4 ? !blocked4.check(address, 'ipv4') : !blocked6.check(address, 'ipv6');
}

const linkLocal4 = new BlockList();
linkLocal4.addSubnet('169.254.0.0', 16, 'ipv4');

/** The eight 16-bit groups of an IPv6 address (an embedded dotted IPv4 tail included). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => Number.parseInt(g, 16));
}

const zeros6 = (g: number[], from: number, to: number) => g.slice(from, to).every((x) => x === 0);

/** The IPv4 address an IPv6 address wraps (IPv4-mapped or -compatible, NAT64, 6to4), if any. */
function embeddedIpv4(g: number[]): string | null {
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (zeros6(g, 0, 5) && (g[5] === 0xffff || g[5] === 0)) return v4(g[6]!, g[7]!); // ::ffff:a.b.c.d, ::a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros6(g, 2, 6)) return v4(g[6]!, g[7]!); // NAT64
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!); // 6to4
  return null;
}

/**
 * Link-local addresses, where cloud metadata services answer (169.254.169.254, AWS's fd00:ec2::254), in
 * every IPv4 and IPv6 form. Refused as webhook targets whatever WEBHOOK_ALLOW_PRIVATE says: a receiver on
 * the local network is a reason to allow private targets, credentials of the machine never are.
 */
export function isLinkLocalOrMetadata(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return linkLocal4.check(address, 'ipv4');
  if (family !== 6) return false;
  const g = ipv6Groups(address);
  if ((g[0]! & 0xffc0) === 0xfe80) return true; // fe80::/10
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && zeros6(g, 2, 7) && g[7] === 0x254) return true;
  const v4 = embeddedIpv4(g);
  return v4 !== null && linkLocal4.check(v4, 'ipv4');
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address (the system resolver, like any other client on this machine). */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family as 4 | 6 }));

export class TargetRefused extends Error {}

/** The host of a URL without IPv6 brackets. */
export const urlHost = (u: URL): string => u.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * The addresses to connect to for `host`. Throws TargetRefused when any of them is not public (unless
 * private targets are allowed): a name with one public and one private answer is refused as a whole,
 * since the connection could otherwise be steered to the private one.
 */
export async function resolveTarget(
  host: string,
  allowPrivate: boolean,
  resolve: Resolver,
): Promise<ResolvedAddress[]> {
  const family = isIP(host);
  const addresses = family !== 0 ? [{ address: host, family: family as 4 | 6 }] : await resolve(host);
  if (addresses.length === 0) throw new Error('host has no address');
  if (addresses.some((a) => isLinkLocalOrMetadata(a.address))) {
    throw new TargetRefused('target is a link-local or cloud metadata address (refused in every configuration)');
  }
  if (!allowPrivate && addresses.some((a) => !isPublicAddress(a.address))) {
    throw new TargetRefused('target is a loopback, private or reserved address (WEBHOOK_ALLOW_PRIVATE is off)');
  }
  return addresses;
}

/** A socket `lookup` that answers the one address already checked, so the connection goes where the check said. */
export function pinnedLookup(target: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) (callback as (e: null, a: ResolvedAddress[]) => void)(null, [target]);
    else callback(null, target.address, target.family);
  };
}

export class FetchFailed extends Error {}

/** A POST instead of the GET (D63: a token request), with its form body and extra headers. */
export interface GuardedPost {
  body: string;
  headers: Record<string, string>;
}

/**
 * A GET (or, with `post`, a POST) of a URL on the D5 rules (https, or http with private targets allowed; public
 * addresses only unless allowed; never link-local or metadata), connected to the checked address, not
 * following redirects, the whole exchange (DNS included) within `timeoutMs` and the body within `maxBytes`.
 * Anything but a 200 throws FetchFailed with a short reason that names no URL.
 */
export async function fetchGuarded(
  raw: string,
  opts: { allowPrivate: boolean; resolve: Resolver; timeoutMs: number; maxBytes: number; post?: GuardedPost },
): Promise<Buffer> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FetchFailed('not a URL');
  }
  if (url.protocol !== 'https:' && !(opts.allowPrivate && url.protocol === 'http:')) {
    throw new FetchFailed('https is required');
  }
  if (url.username || url.password) throw new FetchFailed('credentials in the URL');
  const host = urlHost(url);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), opts.timeoutMs);
  const aborted = new Promise<never>((_, reject) =>
    controller.signal.addEventListener('abort', () => reject(new FetchFailed('timeout'))),
  );
  aborted.catch(() => {});
  try {
    let target: ResolvedAddress;
    try {
      [target] = (await Promise.race([resolveTarget(host, opts.allowPrivate, opts.resolve), aborted])) as [
        ResolvedAddress,
      ];
    } catch (e) {
      if (e instanceof FetchFailed) throw e;
      throw new FetchFailed(e instanceof TargetRefused ? 'address refused (D5)' : 'host not resolved');
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const post = opts.post;
    return await new Promise<Buffer>((resolve, reject) => {
      const req = send({
        protocol: url.protocol,
        method: post ? 'POST' : 'GET',
        hostname: host,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        headers: {
          accept: 'application/json',
          'user-agent': 'svcenv',
          ...(post ? { ...post.headers, 'content-length': String(Buffer.byteLength(post.body)) } : {}),
        },
        agent: false,
        lookup: pinnedLookup(target),
        signal: controller.signal,
        ...(isIP(host) ? {} : { servername: host }),
      });
      req.on('error', () => reject(new FetchFailed(controller.signal.aborted ? 'timeout' : 'network error')));
      req.on('response', (res) => {
        if (res.statusCode !== 200) {
          res.destroy();
          return reject(new FetchFailed(`status ${res.statusCode}`));
        }
        if (Number(res.headers['content-length'] ?? 0) > opts.maxBytes) {
          res.destroy();
          return reject(new FetchFailed('response too large'));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > opts.maxBytes) {
            res.destroy();
            reject(new FetchFailed('response too large'));
          } else chunks.push(c);
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', () => reject(new FetchFailed(controller.signal.aborted ? 'timeout' : 'network error')));
      });
      req.end(post?.body);
    });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * D5/D35 for a URL an Owner configures (webhook targets, D60 issuers): https (http only with private targets
 * allowed), no user name or password, a host whose addresses pass `resolveTarget`. Throws 400 VALIDATION
 * naming `field`.
 */
export async function checkTargetUrl(
  raw: string,
  field: string,
  opts: { allowPrivate: boolean; resolve: Resolver },
): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validation(field, `${field} must be an absolute https:// URL`);
  }
  if (url.protocol !== 'https:' && !(opts.allowPrivate && url.protocol === 'http:')) {
    throw validation(field, `${field} must use https:// (http:// only with WEBHOOK_ALLOW_PRIVATE=true)`);
  }
  if (url.username || url.password) throw validation(field, `${field} must not contain a user name or password`);
  if (!url.hostname) throw validation(field, `${field} must name a host`);
  try {
    await resolveTarget(urlHost(url), opts.allowPrivate, opts.resolve);
  } catch (e) {
    if (e instanceof TargetRefused) {
      throw validation(field, `${field} must not target a loopback, private, link-local or reserved address (D5)`);
    }
    throw validation(field, `the host of ${field} could not be resolved`);
  }
  return url;
}
