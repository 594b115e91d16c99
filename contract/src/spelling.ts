/**
 * "Did you mean": the CLI's guesses at a mistyped command, flag, project or environment (D58) and the
 * server's at a mistyped reference (D67). Plain code without zod: the CLI imports it on its cold path.
 */

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions): "pul", "plul", "pusl". */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The closest candidate when it is close enough to be a typo (one edit for short words, two for longer
 * ones), else the one candidate the word begins (`pu` → `pull` but not `p` → `pull|push`).
 */
export function closestName(word: string, candidates: readonly string[]): string | undefined {
  if (word === '') return undefined;
  const limit = word.length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const dist = editDistance(word.toLowerCase(), c.toLowerCase());
    if (dist < bestDistance) [best, bestDistance] = [c, dist];
  }
  if (best !== undefined && bestDistance <= limit) return best;
  const prefixed = candidates.filter((c) => c.startsWith(word));
  return word.length >= 2 && prefixed.length === 1 ? prefixed[0] : undefined;
}
