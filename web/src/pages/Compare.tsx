import type { Environment, Project, Variable } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import { diffEnvs } from '../api/envs.js';
import { listVars } from '../api/variables.js';
import { Table } from '../components/Table.js';
import { useSubmit } from '../hooks.js';
import { canWrite } from '../lib/access.js';
import { type DiffRow, diffRows, diffSummary } from '../lib/diff.js';
import { displayValue, isMasked } from '../lib/mask.js';
import { Button, Empty, ErrorBanner, Spinner } from '../ui.js';

const LABEL: Record<DiffRow['status'], string> = {
  different: 'differs',
  onlyA: 'only in A',
  onlyB: 'only in B',
  sameByRef: 'same value, by reference',
  same: 'identical',
};

/** A value as written and, for a reference, what a pull gives (masked where the listing masks it, D26). */
function cell(v: Variable | undefined) {
  if (!v) return <span class="muted">—</span>;
  return (
    <>
      <code>{displayValue(v.value)}</code>
      {v.resolvedValue !== undefined && !isMasked(v.value) && (
        <div class="small muted" data-testid="compare-resolved">
          → <code>{displayValue(v.resolvedValue) || '(empty)'}</code>
        </div>
      )}
      {v.resolveError !== undefined && <div class="small muted">does not resolve</div>}
    </>
  );
}

/**
 * The comparison of two environments: the server's verdict (what a pull of each gives, secrets included, ADR
 * 0026) beside the listings, masked until the user reveals the environments they may write to (D23: reveal
 * needs write; each reveal is audited).
 */
function useCompare(project: Project, a: string, b: string) {
  const [rows, setRows] = useState<DiffRow[] | null>(null);
  const [error, setError] = useState<unknown>();
  const [revealed, setRevealed] = useState(false);
  const reveal = useSubmit();
  const load = async (withReveal: boolean) => {
    const list = (env: string) => listVars(project.id, env, withReveal && canWrite(project, env));
    const [d, va, vb] = await Promise.all([diffEnvs(project.id, a, b), list(a), a === b ? null : list(b)]);
    setRows(diffRows(d, va.vars, (vb ?? va).vars));
  };
  useEffect(() => {
    if (!a || !b) return;
    setRows(null);
    setError(undefined);
    setRevealed(false);
    load(false).catch(setError);
  }, [a, b, project.id]);
  const masked = rows?.some((r) =>
    [r.a, r.b].some((v) => v && (isMasked(v.value) || (v.resolvedValue !== undefined && isMasked(v.resolvedValue)))),
  );
  const revealable = [a, b].filter((env) => canWrite(project, env));
  return {
    rows,
    error,
    masked: !!masked,
    revealed,
    /** The environments whose secrets the user may reveal (write); none: the button is not offered. */
    revealable,
    reveal: {
      busy: reveal.busy,
      error: reveal.error,
      run: reveal.submit(async () => {
        await load(true);
        setRevealed(true);
      }),
    },
  };
}

/** Two environments side by side: the server's diff (pulled values compared) with the listings. */
export function CompareView({ project, envs }: { project: Project; envs: Environment[] }) {
  const [a, setA] = useState(envs[0]?.name ?? '');
  const [b, setB] = useState(envs[1]?.name ?? envs[0]?.name ?? '');
  const [hideSame, setHideSame] = useState(true);
  const { rows, error, masked, revealed, revealable, reveal } = useCompare(project, a, b);
  if (envs.length < 2) {
    // `envs` are the environments the user may read (D57): a second one may exist but be closed to them.
    return (
      <Empty title="Nothing to compare">
        {project.access.admin
          ? 'Add a second environment to compare them.'
          : 'Comparing needs read access to two environments; a project Admin can grant it.'}
      </Empty>
    );
  }
  const summary = rows ? diffSummary(rows) : null;
  // "Same value, by reference" stays listed: written differently, it is not identical.
  const visible = rows?.filter((r) => !hideSame || r.status !== 'same') ?? [];
  return (
    <section class="panel">
      <div class="toolbar">
        <label class="inline-field">
          A
          <select class="input" value={a} onChange={(e) => setA(e.currentTarget.value)} aria-label="Environment A">
            {envs.map((e) => (
              <option key={e.name}>{e.name}</option>
            ))}
          </select>
        </label>
        <span aria-hidden="true">⇄</span>
        <label class="inline-field">
          B
          <select class="input" value={b} onChange={(e) => setB(e.currentTarget.value)} aria-label="Environment B">
            {envs.map((e) => (
              <option key={e.name}>{e.name}</option>
            ))}
          </select>
        </label>
        <div class="toolbar-spacer" />
        {masked && !revealed && revealable.length > 0 && (
          <Button
            size="sm"
            busy={reveal.busy}
            title={`Shows the secret values of ${revealable.join(' and ')}; recorded in the audit log`}
            onClick={reveal.run}
          >
            Reveal secrets to compare
          </Button>
        )}
        <label class="check">
          <input type="checkbox" checked={hideSame} onChange={() => setHideSame(!hideSame)} />
          Hide identical
        </label>
      </div>
      {summary && (
        <p class="diff-summary" data-testid="diff-summary">
          <span class="pill pill-warn">{summary.different} differ</span>
          <span class="pill pill-bad">
            {summary.onlyA} only in {a}
          </span>
          <span class="pill pill-ok">
            {summary.onlyB} only in {b}
          </span>
          <span class="pill pill-neutral">{summary.same} identical</span>
          {summary.sameByRef > 0 && (
            <span class="pill pill-info" title="Written differently (a reference) but pulled as the same value">
              {summary.sameByRef} same value, by reference
            </span>
          )}
        </p>
      )}
      {reveal.error ? <ErrorBanner error={reveal.error} /> : null}
      {masked && !revealed && (
        <p class="note small" data-testid="compare-masked-note">
          The comparison covers secrets too: the server compared their real values. They are shown masked
          {revealable.length === 0
            ? '; showing them needs write permission, which a project Admin can grant.'
            : revealable.length < 2
              ? `; you can reveal those of ${revealable[0]} (showing the other's needs write permission).`
              : '.'}
        </p>
      )}
      {error ? (
        <ErrorBanner error={error} />
      ) : !rows ? (
        <Spinner />
      ) : visible.length === 0 ? (
        <Empty title={rows.length ? 'No differences' : 'Both environments are empty'} />
      ) : (
        <Table class="diff-table" columns={['Key', 'Status', a, b]}>
          {visible.map((r) => (
            <tr key={r.key} class={`diff-${r.status}`} data-testid={`compare-row-${r.key}`}>
              <td>
                <code class="var-key">{r.key}</code>
              </td>
              <td>
                <span class={`diff-tag diff-tag-${r.status}`}>{LABEL[r.status]}</span>
              </td>
              <td>{cell(r.a)}</td>
              <td>{cell(r.b)}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
