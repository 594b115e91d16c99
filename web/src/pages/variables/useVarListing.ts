import type { Variable } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import { currentRevision } from '../../api/change-requests.js';
import { listVars } from '../../api/variables.js';
import { ApiError } from '../../api.js';
import { toggled } from '../../lib/sets.js';
import { useToast } from '../../toast.js';

export type VarListing = ReturnType<typeof useVarListing>;

/**
 * The variables of one environment as the caller may see them: the masked listing, and the plaintext
 * listing fetched on the first reveal (it needs write permission, ADR 0006), kept in memory only.
 * `trackRevision`: also know the revision the listing shows at least (read just before it), which a change
 * request sends in If-Match (D46, D47), so a change made before the listing was read is never missed.
 */
export function useVarListing(projectId: string, env: string, trackRevision = false) {
  const toast = useToast();
  const [vars, setVars] = useState<Variable[] | null>(null);
  const [loadError, setLoadError] = useState<unknown>();
  const [plain, setPlain] = useState<Map<string, Variable> | null>(null);
  const [revealAll, setRevealAll] = useState(false);
  const [revealed, setRevealed] = useState<Set<string>>(new Set());
  const [revealError, setRevealError] = useState<unknown>();
  const [revision, setRevision] = useState<number | null>(null);

  const fetchPlain = async (): Promise<Map<string, Variable> | null> => {
    try {
      const res = await listVars(projectId, env, true);
      const m = new Map(res.vars.map((v) => [v.key, v]));
      setPlain(m);
      setRevealError(undefined);
      return m;
    } catch (e) {
      setRevealError(e);
      return null;
    }
  };
  const load = async () => {
    setLoadError(undefined);
    try {
      const rev = trackRevision ? await currentRevision(projectId, env) : null;
      const res = await listVars(projectId, env);
      setVars(res.vars);
      setRevision(rev);
      // Once revealed, the plaintext follows every change, so a revealed row never shows a stale value.
      if (plain) await fetchPlain();
    } catch (e) {
      setLoadError(e);
    }
  };
  useEffect(() => {
    void load();
  }, []);

  /** Toggles one key (or, with null, every key) between masked and plaintext. */
  const reveal = async (key: string | null) => {
    if (!plain && !(await fetchPlain())) {
      toast('You need write access to this environment to reveal values', 'error');
      return;
    }
    if (key === null) {
      setRevealAll(!revealAll);
      setRevealed(new Set());
    } else {
      setRevealed(toggled(revealed, key));
    }
  };

  /** One key's plaintext for a copy: reveals it (fetching the plaintext listing once), or null when refused. */
  const plaintextOf = async (key: string): Promise<string | null> => {
    const m = plain ?? (await fetchPlain());
    if (!m) {
      toast('You need write access to this environment to reveal values', 'error');
      return null;
    }
    if (!revealAll && !revealed.has(key)) setRevealed(toggled(revealed, key));
    return m.get(key)?.value ?? null;
  };

  return {
    vars,
    plaintextOf,
    loadError,
    load,
    revision,
    plain,
    revealAll,
    revealed,
    reveal,
    forbiddenReveal: revealError instanceof ApiError && revealError.status === 403,
    /** What a row shows: the plaintext when it is revealed and known, the listing's entry otherwise. */
    shown: (v: Variable): Variable => ((revealAll || revealed.has(v.key)) && plain?.get(v.key)) || v,
  };
}
