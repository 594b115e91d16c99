/**
 * D62: the "Allowed from" text of a token or an identity as the `trustedCidrs` list, checked in the browser by
 * the server's own parser (contract/src/cidr.ts, zod-free), so a typo is named before the request is sent.
 */
import { MAX_TRUSTED_CIDRS, parseCidr } from '@svcenv/contract/cidr';

export type CidrParse = { list: string[]; error?: undefined } | { list?: undefined; error: string };

/** Entries separated by commas, spaces or new lines; empty text is the empty list (anywhere). */
export function parseCidrList(text: string): CidrParse {
  const list = text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length > MAX_TRUSTED_CIDRS) return { error: `at most ${MAX_TRUSTED_CIDRS} addresses or ranges` };
  const bad = list.find((c) => parseCidr(c) === null);
  if (bad !== undefined) return { error: `${bad} is not an IPv4 or IPv6 address or CIDR range` };
  return { list };
}

/** A list as the dashboard shows it: "anywhere" when empty. */
export const cidrSummary = (list: string[]): string => (list.length ? list.join(', ') : 'anywhere');
