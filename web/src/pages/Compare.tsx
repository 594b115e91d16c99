import type { Environment, Project, Variable } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import { diffEnvs } from '../api/envs.js';
import { listVars } from '../api/variables.js';
import { Table } from '../components/Table.js';
import { type DiffRow, diffRows, diffSummary } from '../lib/diff.js';
import { displayValue } from '../lib/mask.js';
import { Empty, ErrorBanner, Spinner } from '../ui.js';

const LABEL: Record<DiffRow['status'], string> = {
  different: 'differs',
  onlyA: 'only in A',
  onlyB: 'only in B',
  same: 'same',
};

function cell(v: Variable | undefined) {
  if (!v) return <span class="muted">—</span>;
  return <code>{displayValue(v.value)}</code>;
}

/** Two environments side by side: the server's diff (real values compared) with the masked listings. */
export function CompareView({ project, envs }: { project: Project; envs: Environment[] }) {
  const [a, setA] = useState(envs[0]?.name ?? '');
  const [b, setB] = useState(envs[1]?.name ?? envs[0]?.name ?? '');
  const [rows, setRows] = useState<DiffRow[] | null>(null);
  const [error, setError] = useState<unknown>();
  const [hideSame, setHideSame] = useState(true);
  useEffect(() => {
    if (!a || !b) return;
    setRows(null);
    setError(undefined);
    Promise.all([diffEnvs(project.id, a, b), listVars(project.id, a), listVars(project.id, b)])
      .then(([d, va, vb]) => setRows(diffRows(d, va.vars, vb.vars)))
      .catch(setError);
  }, [a, b, project.id]);
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
            <tr key={r.key} class={`diff-${r.status}`}>
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
