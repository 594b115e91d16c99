import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

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
