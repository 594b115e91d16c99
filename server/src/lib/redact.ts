/**
 * What may be echoed in an error or written to a log line. A client that pastes a credential into the
 * wrong place (a field name, a path segment) must not find it in our answer or in the server's log.
 */

/** Prefixes of credentials people paste: ours (D33), common providers', JWTs. */
const CREDENTIAL_PREFIX =
  /^(tok_live_|tok_test_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|sk_live_|sk_test_|rk_live_|xox[abpr]-|whsec_|npm_|AKIA|ASIA|eyJ)/;

/**
 * True for text shaped like a credential: a known prefix, or 20+ characters mixing lower case, upper case
 * and digits (random base62). Our own names never look like that: field names are camelCase words, keys
 * UPPER_SNAKE, environments lower-case, ids lower-case uuids.
 */
export function looksLikeCredential(text: string): boolean {
  if (CREDENTIAL_PREFIX.test(text)) return true;
  return text.length >= 20 && /[a-z]/.test(text) && /[A-Z]/.test(text) && /[0-9]/.test(text);
}

/** True for text that may be echoed as a field name: identifier-shaped and not credential-shaped. */
export function fieldNameLike(text: string): boolean {
  return /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/.test(text) && !looksLikeCredential(text);
}

/**
 * Paths already found to hold nothing credential-shaped. Every request is logged and clients repeat their
 * paths (a CI job's or a watcher's pull), so most lines skip the per-segment checks. Only such clean paths
 * are kept, so no credential stays in memory past its request; at most 4,096 paths of up to 256 characters
 * (a scan of random long paths cannot grow it), emptied when full.
 */
const cleanPaths = new Set<string>();
const MAX_CLEAN_PATHS = 4096;
const MAX_CLEAN_PATH_LENGTH = 256;

/** A request path for the log: every credential-shaped segment replaced. */
export function loggablePath(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (cleanPaths.has(path)) return path;
  const logged = redactSegments(path);
  if (logged === path && path.length <= MAX_CLEAN_PATH_LENGTH) {
    if (cleanPaths.size >= MAX_CLEAN_PATHS) cleanPaths.clear();
    cleanPaths.add(path);
  }
  return logged;
}

function redactSegments(path: string): string {
  return path
    .split('/')
    .map((segment) => {
      // Every request is logged: decoding is skipped where there is nothing to decode.
      let decoded = segment;
      if (segment.includes('%'))
        try {
          decoded = decodeURIComponent(segment);
        } catch {}
      return looksLikeCredential(decoded) ? '[redacted]' : segment;
    })
    .join('/');
}
