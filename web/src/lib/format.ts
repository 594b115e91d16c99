const DAY = 86_400_000;

/** "in 3 days", "today", "2 days ago": for expiry markers, from the caller's clock. */
export function expiresIn(expiresAt: string, now: Date = new Date()): { label: string; tone: 'ok' | 'warn' | 'bad' } {
  const ms = Date.parse(expiresAt) - now.getTime();
  const days = Math.ceil(ms / DAY);
  if (ms <= 0) {
    const ago = Math.floor(-ms / DAY);
    return { label: ago === 0 ? 'expired today' : `expired ${ago} day${ago === 1 ? '' : 's'} ago`, tone: 'bad' };
  }
  const label = days <= 1 ? 'expires within a day' : `expires in ${days} days`;
  return { label, tone: days <= 7 ? 'warn' : 'ok' };
}

export function relativeTime(ts: string | null | undefined, now: Date = new Date()): string {
  if (!ts) return 'never';
  const s = Math.round((now.getTime() - Date.parse(ts)) / 1000);
  const future = s < 0;
  const a = Math.abs(s);
  const [n, unit] =
    a < 45
      ? [0, '']
      : a < 3600
        ? [Math.round(a / 60), 'minute']
        : a < DAY / 1000
          ? [Math.round(a / 3600), 'hour']
          : [Math.round(a / 86400), 'day'];
  if (n === 0) return 'just now';
  const txt = `${n} ${unit}${n === 1 ? '' : 's'}`;
  return future ? `in ${txt}` : `${txt} ago`;
}

export function dateTime(ts: string): string {
  return new Date(ts).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function dateOnly(ts: string): string {
  return new Date(ts).toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/** A readable text colour on a coloured badge. */
export function contrastText(hex: string): string {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) return '#fff';
  const [r, g, b] = [m[1]!, m[2]!, m[3]!].map((x) => Number.parseInt(x, 16));
  return 0.299 * r! + 0.587 * g! + 0.114 * b! > 160 ? '#111827' : '#fff';
}
