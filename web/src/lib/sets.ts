/** A copy of `set` with `item` added, or removed when it was there (checkboxes, reveal toggles). */
export function toggled<T>(set: ReadonlySet<T>, item: T): Set<T> {
  const next = new Set(set);
  if (next.has(item)) next.delete(item);
  else next.add(item);
  return next;
}
