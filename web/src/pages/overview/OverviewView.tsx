import type { Environment, Project, Variable } from '@svcenv/contract';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { listVars, updateVar, upsertVars } from '../../api/variables.js';
import { ModalForm } from '../../components/ModalForm.js';
import { useSaveValidated } from '../../components/Unresolved.js';
import { useSubmit } from '../../hooks.js';
import { canWrite } from '../../lib/access.js';
import { DOTS, displayValue, isMasked } from '../../lib/mask.js';
import { type CellState, type Listing, overviewRows } from '../../lib/overview.js';
import { useToast } from '../../toast.js';
import { Button, Empty, ErrorBanner, Field, Pill, Spinner } from '../../ui.js';

const STATUS = {
  same: { tone: 'ok', label: 'same' },
  byRef: { tone: 'ok', label: 'same value, by reference' },
  differs: { tone: 'warn', label: 'differs' },
  missing: { tone: 'bad', label: 'missing somewhere' },
  set: { tone: 'neutral', label: 'secrets not compared' },
} as const;

const CELL_WORDS: Record<CellState, string> = {
  set: 'set',
  differs: 'differs',
  only: 'only here',
  same: 'same',
  byRef: 'same value, by reference',
  missing: 'missing',
  unknown: '',
};

/**
 * A cell's value as written and, for a reference, what it resolves to (the pulled value, which is what the
 * comparison compares, ADR 0026). A masked value reads as dots; a masked resolution too (D26).
 */
function CellValue({ variable: v, masked }: { variable: Variable; masked: boolean }) {
  const written = isMasked(v.value) ? DOTS : v.value || '(empty)';
  return (
    <>
      <code class="overview-value" title={isMasked(v.value) ? undefined : v.value}>
        {masked && v.resolvedValue === undefined ? DOTS : written}
      </code>
      {v.resolvedValue !== undefined && !isMasked(v.value) && (
        <span class="overview-resolved" data-testid="overview-resolved">
          →{' '}
          <code title={isMasked(v.resolvedValue) ? undefined : v.resolvedValue}>
            {displayValue(v.resolvedValue) || '(empty)'}
          </code>
        </span>
      )}
      {v.resolveError !== undefined && <span class="overview-resolved">does not resolve</span>}
    </>
  );
}

/**
 * The Overview tab: every key of the project across the environments the user can read, one row per key and a
 * column per environment, each cell present, missing or differing. Values compare as a pull gives them (a
 * reference by what it resolves to, ADR 0026), as far as the listings show them: plain values always, secrets
 * only once revealed (which needs write, D23, and is audited), else "set". Where
 * the user may write, a value is edited in place and a missing key is copied from another environment through
 * the bulk upsert (reading a secret to copy it reveals it, so that needs write on the source too).
 */
export function OverviewView({ project, envs }: { project: Project; envs: Environment[] }) {
  const toast = useToast();
  const [listings, setListings] = useState<Map<string, Listing>>(new Map());
  const [errors, setErrors] = useState<Map<string, unknown>>(new Map());
  const [loaded, setLoaded] = useState(false);
  const [revealed, setRevealed] = useState(false);
  const [filter, setFilter] = useState('');
  const [onlyGaps, setOnlyGaps] = useState(false);
  const [editing, setEditing] = useState<{ env: string; key: string } | null>(null);
  const [copying, setCopying] = useState<{ env: string; key: string } | null>(null);
  const reveal = useSubmit();

  /** Direct writes: write permission, and no approval step in the way (D47: Owners and project Admins skip it). */
  const canEdit = (env: Environment) => canWrite(project, env.name) && (!env.requireApproval || project.access.admin);
  const writable = envs.filter((e) => canWrite(project, e.name)).map((e) => e.name);

  const load = async (names: string[], withReveal: boolean) => {
    type Result = { env: string; listing: Listing } | { env: string; error: unknown };
    const results = await Promise.all(
      names.map(async (env): Promise<Result> => {
        const reveals = withReveal && canWrite(project, env);
        try {
          const r = await listVars(project.id, env, reveals);
          return { env, listing: { vars: new Map(r.vars.map((v) => [v.key, v])) } };
        } catch (error) {
          return { env, error };
        }
      }),
    );
    setListings((prev) => {
      const next = new Map(prev);
      for (const r of results) if ('listing' in r) next.set(r.env, r.listing);
      return next;
    });
    setErrors((prev) => {
      const next = new Map(prev);
      for (const r of results) {
        if ('error' in r) next.set(r.env, r.error);
        else next.delete(r.env);
      }
      return next;
    });
  };
  const envKey = envs.map((e) => e.name).join(',');
  useEffect(() => {
    setLoaded(false);
    setRevealed(false);
    setListings(new Map());
    void load(
      envs.map((e) => e.name),
      false,
    ).then(() => setLoaded(true));
  }, [project.id, envKey]);

  const rows = useMemo(
    () =>
      overviewRows(
        envs.map((e) => e.name),
        listings,
      ),
    [envs, listings],
  );
  const needle = filter.trim().toLowerCase();
  const shown = rows.filter(
    (r) =>
      (!needle || r.key.toLowerCase().includes(needle)) && (!onlyGaps || (r.status !== 'same' && r.status !== 'byRef')),
  );
  const anyMasked = rows.some((r) => r.cells.some((c) => c.state === 'set'));

  if (envs.length === 0) return <Empty title="No environments you can read" />;
  if (!loaded) return <Spinner />;
  const afterWrite = async (env: string) => load([env], revealed);

  return (
    <section class="panel overview">
      <div class="toolbar">
        <input
          class="input input-search"
          type="search"
          placeholder="Filter keys"
          aria-label="Filter keys"
          value={filter}
          onInput={(e) => setFilter(e.currentTarget.value)}
        />
        <label class="check-label">
          <input type="checkbox" checked={onlyGaps} onChange={(e) => setOnlyGaps(e.currentTarget.checked)} /> Only keys
          that are missing or differ
        </label>
        <div class="toolbar-spacer" />
        {writable.length > 0 && anyMasked && !revealed && (
          <Button
            size="sm"
            busy={reveal.busy}
            title="Shows secret values of the environments you can write to; recorded in the audit log"
            onClick={reveal.submit(async () => {
              await load(writable, true);
              setRevealed(true);
            })}
          >
            Reveal secrets to compare
          </Button>
        )}
        <span class="muted small">
          {shown.length} of {rows.length} keys
        </span>
      </div>
      {reveal.error ? <ErrorBanner error={reveal.error} /> : null}
      {[...errors].map(([env, error]) => (
        <div key={env}>
          <p class="muted small">{env}:</p>
          <ErrorBanner error={error} onRetry={() => load([env], revealed)} />
        </div>
      ))}
      {anyMasked && (
        <p class="note small">
          Secret values read “set” until revealed: they are not compared
          {writable.length === 0 ? ' (revealing needs write permission)' : ''}.
        </p>
      )}
      {rows.length === 0 ? (
        <Empty title="No variables yet">Add variables on the Variables tab.</Empty>
      ) : (
        <div class="table-wrap overview-wrap">
          <table class="table overview-table">
            <thead>
              <tr>
                <th scope="col">Key</th>
                {envs.map((e) => (
                  <th scope="col" key={e.name}>
                    <span class="env-dot" style={{ background: e.color }} aria-hidden="true" /> {e.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {shown.map((row) => (
                <tr key={row.key} data-testid={`overview-row-${row.key}`}>
                  <th scope="row" class="overview-key">
                    <code>{row.key}</code>
                    <div>
                      <Pill tone={STATUS[row.status].tone}>{STATUS[row.status].label}</Pill>
                    </div>
                  </th>
                  {envs.map((env, i) => {
                    const cell = row.cells[i]!;
                    const id = `overview-${row.key}-${env.name}`;
                    const isEditing = editing?.env === env.name && editing.key === row.key;
                    return (
                      <td key={env.name} class={`overview-cell overview-${cell.state}`} data-testid={id}>
                        {cell.state === 'unknown' ? (
                          <span class="muted" title="This environment did not load">
                            —
                          </span>
                        ) : cell.state === 'missing' ? (
                          <>
                            <span class="overview-state">missing</span>
                            {canEdit(env) && (
                              <Button
                                size="sm"
                                variant="ghost"
                                aria-label={`Copy ${row.key} to ${env.name}`}
                                onClick={() => setCopying({ env: env.name, key: row.key })}
                              >
                                Copy here
                              </Button>
                            )}
                          </>
                        ) : isEditing && cell.variable ? (
                          <InlineEdit
                            project={project}
                            env={env.name}
                            variable={cell.variable}
                            onDone={async (saved) => {
                              setEditing(null);
                              if (saved) {
                                toast(`${row.key} saved in ${env.name}`);
                                await afterWrite(env.name);
                              }
                            }}
                          />
                        ) : (
                          <>
                            {cell.variable && <CellValue variable={cell.variable} masked={cell.state === 'set'} />}
                            <span class="overview-state">{CELL_WORDS[cell.state]}</span>
                            {canEdit(env) && (
                              <Button
                                size="sm"
                                variant="ghost"
                                aria-label={`Edit ${row.key} in ${env.name}`}
                                onClick={() => setEditing({ env: env.name, key: row.key })}
                              >
                                Edit
                              </Button>
                            )}
                          </>
                        )}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {copying && (
        <CopyDialog
          project={project}
          target={copying.env}
          varKey={copying.key}
          sources={envs
            .map((e) => e.name)
            .filter((e) => listings.get(e)?.vars.has(copying.key))
            .map((e) => ({ env: e, variable: listings.get(e)!.vars.get(copying.key)! }))}
          onClose={() => setCopying(null)}
          onCopied={async (from) => {
            setCopying(null);
            toast(`${copying.key} copied from ${from} to ${copying.env}`);
            await afterWrite(copying.env);
          }}
        />
      )}
    </section>
  );
}

/** One value edited in place: Enter or Save writes it (PUT, the type kept), Escape or Cancel leaves it. */
function InlineEdit({
  project,
  env,
  variable,
  onDone,
}: {
  project: Project;
  env: string;
  variable: Variable;
  onDone: (saved: boolean) => void;
}) {
  // A masked secret is replaced, never shown: the field starts empty.
  const [value, setValue] = useState(isMasked(variable.value) ? '' : variable.value);
  const { busy, error, submit } = useSubmit();
  const save = useSaveValidated();
  return (
    <form
      class="overview-edit"
      onSubmit={submit(async () => {
        await save((validate) => updateVar(project.id, env, variable.key, { value }, { validate }));
        onDone(true);
      })}
    >
      <input
        class="input input-sm input-code"
        aria-label={`New value of ${variable.key} in ${env}`}
        value={value}
        placeholder={isMasked(variable.value) ? 'new secret value' : undefined}
        autofocus
        onInput={(e) => setValue(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            onDone(false);
          }
        }}
      />
      <div class="row-actions">
        <Button size="sm" type="submit" variant="primary" busy={busy}>
          Save
        </Button>
        <Button size="sm" onClick={() => onDone(false)}>
          Cancel
        </Button>
      </div>
      {error ? <ErrorBanner error={error} /> : null}
    </form>
  );
}

/**
 * Copies one key into an environment that lacks it, from an environment that has it: the value is read (a
 * masked secret is read with reveal, which needs write on the source) and written with the bulk upsert, with
 * the source's type.
 */
function CopyDialog({
  project,
  target,
  varKey,
  sources,
  onClose,
  onCopied,
}: {
  project: Project;
  target: string;
  varKey: string;
  sources: { env: string; variable: Variable }[];
  onClose: () => void;
  onCopied: (from: string) => void;
}) {
  const readable = (s: { env: string; variable: Variable }) =>
    !s.variable.valueError && (!isMasked(s.variable.value) || canWrite(project, s.env));
  const [from, setFrom] = useState((sources.find(readable) ?? sources[0])?.env ?? '');
  const { busy, error, submit } = useSubmit();
  const save = useSaveValidated();
  const source = sources.find((s) => s.env === from);
  const blocked = !source || !readable(source);
  return (
    <ModalForm
      title={`Copy ${varKey} to ${target}`}
      onClose={onClose}
      onSubmit={submit(async () => {
        if (!source || blocked) return;
        let { value } = source.variable;
        if (isMasked(value)) {
          const r = await listVars(project.id, source.env, true);
          const v = r.vars.find((x) => x.key === varKey);
          if (!v) throw new Error(`${varKey} is no longer in ${source.env}`);
          value = v.value;
        }
        const items = [{ key: varKey, value, type: source.variable.type }];
        await save((validate) => upsertVars(project.id, { envs: [target], items }, { validate }));
        onCopied(source.env);
      })}
      busy={busy}
      error={error}
      fields={[]}
      submitLabel={`Copy to ${target}`}
      disabled={blocked}
    >
      <Field label="From environment">
        <select class="input" value={from} onChange={(e) => setFrom(e.currentTarget.value)}>
          {sources.map((s) => (
            <option key={s.env} value={s.env}>
              {s.env}
              {readable(s) ? '' : ' (secret: needs write to read)'}
            </option>
          ))}
        </select>
      </Field>
      {source && (
        <p class="small">
          {source.variable.type === 'secret' ? 'Secret' : 'Plain'} value{' '}
          <code>{displayValue(source.variable.value) || '(empty)'}</code>
          {isMasked(source.variable.value) && readable(source) && (
            <span class="muted"> — read with reveal, which is recorded in the audit log</span>
          )}
        </p>
      )}
      {source && !readable(source) && (
        <p class="note">
          Copying a secret reads its value, which needs write permission on {source.env}. Ask a project Admin, or copy
          from another environment.
        </p>
      )}
    </ModalForm>
  );
}
