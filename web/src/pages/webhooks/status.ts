/** A delivery's HTTP status as a pill's tone: 2xx went through, anything else (0: no answer) did not. */
export function statusTone(s: number | null): string {
  if (s === null) return 'neutral';
  return s >= 200 && s < 300 ? 'ok' : 'bad';
}
