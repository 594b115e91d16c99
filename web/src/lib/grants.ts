/**
 * D73 temporary grants in words and numbers: how long is left ("ends in 3 h"), the durations offered when
 * granting or approving, and the new end of an extended grant. Pure, from the caller's clock.
 */
export const HOUR = 3600;
export const DAY = 86_400;

/** The durations offered when granting; `null` is permanent, `custom` asks for hours. */
export const GRANT_CHOICES = [
  { value: 'permanent', label: 'Permanent', seconds: null },
  { value: '1h', label: '1 hour', seconds: HOUR },
  { value: '1d', label: '1 day', seconds: DAY },
  { value: '7d', label: '7 days', seconds: 7 * DAY },
  { value: 'custom', label: 'Custom…', seconds: null },
] as const;
export type GrantChoice = (typeof GRANT_CHOICES)[number]['value'];

/** "3 h", "2 days", "45 min": a span of seconds, rounded to its largest unit. */
export function spanWords(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < HOUR - 30) {
    const m = Math.max(1, Math.round(s / 60));
    return `${m} min`;
  }
  if (s < DAY) {
    const h = Math.round(s / HOUR);
    return h >= 24 ? '1 day' : `${h} h`;
  }
  const d = Math.round(s / DAY);
  return `${d} day${d === 1 ? '' : 's'}`;
}

/** A temporary grant's time left: "ends in 3 h", or "ended" once past. */
export function timeLeft(expiresAt: string, now: Date = new Date()): { label: string; soon: boolean } {
  const s = (Date.parse(expiresAt) - now.getTime()) / 1000;
  if (s <= 0) return { label: 'ended', soon: true };
  return { label: `ends in ${spanWords(s)}`, soon: s < HOUR };
}

/** The `expiresAt` of a grant made now for `seconds`; null (permanent) stays null. */
export function expiryIn(seconds: number | null, now: Date = new Date()): string | null {
  return seconds === null ? null : new Date(now.getTime() + seconds * 1000).toISOString();
}

/** An extended grant's end: `seconds` more from its current end, or from now if that has passed. */
export function extended(expiresAt: string, seconds: number, now: Date = new Date()): string {
  const from = Math.max(Date.parse(expiresAt), now.getTime());
  return new Date(from + seconds * 1000).toISOString();
}

/** The approval choices for a request of `asked` seconds: 1 hour and 1 day when shorter, and the asked one. */
export function approvalChoices(asked: number): { label: string; seconds: number }[] {
  const out = [HOUR, DAY].filter((s) => s < asked).map((s) => ({ label: spanWords(s), seconds: s }));
  return [...out, { label: `${spanWords(asked)} (asked)`, seconds: asked }];
}
