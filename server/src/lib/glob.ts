/**
 * D60: whether `value` matches `pattern`, in which `*` matches any run of characters (none included) and
 * every other character itself. Linear-time two-pointer matching with backtracking to the last `*` only, so
 * an Owner's pattern cannot make a login slow the way a regular expression with nested repetition can.
 */
export function globMatch(pattern: string, value: string): boolean {
  let p = 0;
  let v = 0;
  let star = -1;
  let mark = 0;
  while (v < value.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === value[v]) {
      p++;
      v++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = v;
    } else if (star >= 0) {
      p = star + 1;
      v = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}
