/**
 * D62: IPv4 and IPv6 addresses and CIDR ranges, parsed without node:net so that the dashboard validates
 * `trustedCidrs` by the very rule the server applies. An address is 4 or 16 bytes; an IPv4-mapped IPv6
 * address (`::ffff:a.b.c.d`, how a dual-stack socket reports an IPv4 client) is its IPv4 address.
 */
export interface IpAddress {
  bytes: number[];
}

export interface CidrRange {
  bytes: number[];
  prefix: number;
}

/** D62: at most this many entries in `trustedCidrs`. */
export const MAX_TRUSTED_CIDRS = 20;

function parseIpv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    // No leading zeros: `010` is octal to some parsers and decimal to others.
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out;
}

function parseIpv6(text: string): number[] | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return null;
  let groups: string[];
  let tail4: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.')) {
    const v4 = parseIpv4(text.slice(lastColon + 1));
    if (!v4) return null;
    tail4 = v4;
    // What precedes the IPv4 tail: "::ffff:" → "::ffff", "::" stays "::", "1:2:3:4:5:6:" → "1:2:3:4:5:6".
    text = text.slice(0, lastColon + 1);
    if (!text.endsWith('::')) text = text.slice(0, -1);
  }
  const want = tail4.length ? 6 : 8;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const split = (s: string) => (s === '' ? [] : s.split(':'));
  if (halves.length === 2) {
    const head = split(halves[0]!);
    const tail = split(halves[1]!);
    if (head.length + tail.length > want - 1) return null;
    groups = [...head, ...Array(want - head.length - tail.length).fill('0'), ...tail];
  } else {
    groups = split(text);
    if (groups.length !== want) return null;
  }
  const out: number[] = [];
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    const n = Number.parseInt(g, 16);
    out.push(n >> 8, n & 255);
  }
  return [...out, ...tail4];
}

const MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255];

/** An address, or null. IPv4-mapped IPv6 addresses come back as IPv4. */
export function parseIp(text: string): IpAddress | null {
  const v4 = parseIpv4(text);
  if (v4) return { bytes: v4 };
  const v6 = parseIpv6(text);
  if (!v6) return null;
  if (MAPPED_PREFIX.every((b, i) => v6[i] === b)) return { bytes: v6.slice(12) };
  return { bytes: v6 };
}

/** `a.b.c.d`, `a.b.c.d/n`, an IPv6 address, or `x::y/n`; a lone address is its own range. Null otherwise. */
export function parseCidr(text: string): CidrRange | null {
  const slash = text.indexOf('/');
  const addressText = slash < 0 ? text : text.slice(0, slash);
  // A mapped IPv6 form would silently become an IPv4 range with a 128-bit prefix: refused, write the IPv4 form.
  const v4 = parseIpv4(addressText);
  const bytes = v4 ?? parseIpv6(addressText);
  if (!bytes || (!v4 && MAPPED_PREFIX.every((b, i) => bytes[i] === b))) return null;
  const bits = bytes.length * 8;
  if (slash < 0) return { bytes, prefix: bits };
  const p = text.slice(slash + 1);
  if (!/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > bits) return null;
  return { bytes, prefix: Number(p) };
}

/** Whether the address lies in the range (an IPv4 address never lies in an IPv6 range, nor the reverse). */
export function cidrContains(range: CidrRange, ip: IpAddress): boolean {
  if (range.bytes.length !== ip.bytes.length) return false;
  let left = range.prefix;
  for (let i = 0; left > 0; i++, left -= 8) {
    const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff;
    if ((range.bytes[i]! & mask) !== (ip.bytes[i]! & mask)) return false;
  }
  return true;
}
