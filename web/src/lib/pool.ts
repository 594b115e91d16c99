/**
 * `fn` over `items` with at most `limit` calls in flight at a time, the results in the items' order. A rejected
 * call rejects the whole (callers that skip failures catch inside `fn`). Used where one screen asks the same
 * question of many projects: all at once would flood the server (and the browser's six connections per
 * host), one by one would make the screen wait for the sum of them.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}
