import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, api, seg } from '../api.js';
import { Icon } from '../icons.js';
import { expiresIn, relativeTime } from '../lib/format.js';
import { isOwner, useSession } from '../session.js';
import type { Environment, Project, Variable } from '../types.js';
import { Button, Confirm, Empty, ErrorBanner, FormError, Pill, Spinner, useToast } from '../ui.js';
import { HistoryModal } from './History.js';
import { ImportModal } from './Import.js';
import { AddEnv, EnvTabs } from './Project.js';

type VarType = Variable['type'];

export function VariablesView({
  project,
  envs,
  env,
  onEnv,
  onEnvsChanged,
}: {
  project: Project;
  envs: Environment[];
  env: string | null;
  onEnv: (e: string) => void;
  onEnvsChanged: () => Promise<void>;
}) {
  const { user } = useSession();
  const toast = useToast();
  const [adding, setAdding] = useState(false);
  const [deletingEnv, setDeletingEnv] = useState(false);
  const current = envs.find((e) => e.name === env);
  return (
    <>
      <EnvTabs envs={envs} current={env} onSelect={onEnv} onAdd={() => setAdding(true)} />
      {!current ? (
        <Empty title="No environments" action={<Button onClick={() => setAdding(true)}>Add an environment</Button>}>
          Variables live in environments such as dev, staging and prod.
        </Empty>
      ) : (
        <EnvPanel
          key={`${project.id}/${current.name}`}
          project={project}
          env={current}
          envs={envs}
          canProtect={isOwner(user)}
          onToggleProtect={async () => {
            try {
              await api.patch(`/projects/${seg(project.id)}/envs/${seg(current.name)}`, {
                protected: !current.protected,
              });
              await onEnvsChanged();
              toast(`${current.name} is ${current.protected ? 'no longer protected' : 'now protected'}`);
            } catch (e) {
              toast(e instanceof Error ? e.message : String(e), 'error');
            }
          }}
          onDeleteEnv={() => setDeletingEnv(true)}
          onColor={async (color) => {
            try {
              await api.patch(`/projects/${seg(project.id)}/envs/${seg(current.name)}`, { color });
              await onEnvsChanged();
            } catch (e) {
              toast(e instanceof Error ? e.message : String(e), 'error');
            }
          }}
        />
      )}
      {adding && (
        <AddEnv
          project={project}
          onClose={() => setAdding(false)}
          onAdded={async (name) => {
            setAdding(false);
            await onEnvsChanged();
            onEnv(name);
            toast(`Environment ${name} added`);
          }}
        />
      )}
      {deletingEnv && current && (
        <Confirm
          title={`Delete ${current.name}?`}
          action="Delete environment"
          body={
            <p>
              Every variable in <strong>{current.name}</strong> is deleted with it, together with their history. Tokens
              limited to it stop working for it.
            </p>
          }
          onClose={() => setDeletingEnv(false)}
          onConfirm={async () => {
            await api.del(`/projects/${seg(project.id)}/envs/${seg(current.name)}`);
            setDeletingEnv(false);
            await onEnvsChanged();
            const next = envs.find((e) => e.name !== current.name);
            if (next) onEnv(next.name);
            toast(`Environment ${current.name} deleted`);
          }}
        />
      )}
    </>
  );
}

function EnvPanel({
  project,
  env,
  envs,
  canProtect,
  onToggleProtect,
  onDeleteEnv,
  onColor,
}: {
  project: Project;
  env: Environment;
  envs: Environment[];
  canProtect: boolean;
  onToggleProtect: () => void;
  onDeleteEnv: () => void;
  onColor: (color: string) => void;
}) {
  const toast = useToast();
  const base = `/projects/${seg(project.id)}/envs/${seg(env.name)}`;
  const [vars, setVars] = useState<Variable[] | null>(null);
  const [loadError, setLoadError] = useState<unknown>();
  /** Plaintext listing, fetched on the first reveal (needs write permission); never stored beyond this view. */
  const [plain, setPlain] = useState<Map<string, Variable> | null>(null);
  const [revealAll, setRevealAll] = useState(false);
  const [revealed, setRevealed] = useState<Set<string>>(new Set());
  const [revealError, setRevealError] = useState<unknown>();
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [editing, setEditing] = useState<string | null>(null);
  const [historyKey, setHistoryKey] = useState<string | null>(null);
  const [importing, setImporting] = useState(false);
  const [confirmBulk, setConfirmBulk] = useState(false);
  const [deleteKey, setDeleteKey] = useState<string | null>(null);
  const [filter, setFilter] = useState('');

  const load = async () => {
    setLoadError(undefined);
    try {
      const res = await api.get<{ vars: Variable[] }>(`${base}/vars`);
      setVars(res.vars);
      if (plain) await fetchPlain();
    } catch (e) {
      setLoadError(e);
    }
  };
  const fetchPlain = async (): Promise<Map<string, Variable> | null> => {
    try {
      const res = await api.get<{ vars: Variable[] }>(`${base}/vars`, { reveal: 'true' });
      const m = new Map(res.vars.map((v) => [v.key, v]));
      setPlain(m);
      setRevealError(undefined);
      return m;
    } catch (e) {
      setRevealError(e);
      return null;
    }
  };
  useEffect(() => {
    void load();
  }, []);

  const reveal = async (key: string | null) => {
    if (!plain && !(await fetchPlain())) {
      toast('You need write access to this environment to reveal values', 'error');
      return;
    }
    if (key === null) {
      setRevealAll(!revealAll);
      setRevealed(new Set());
    } else {
      const next = new Set(revealed);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      setRevealed(next);
    }
  };

  const shown = useMemo(
    () => (vars ?? []).filter((v) => !filter || v.key.toLowerCase().includes(filter.toLowerCase())),
    [vars, filter],
  );
  const allSelected = shown.length > 0 && shown.every((v) => selected.has(v.key));
  const forbiddenReveal = revealError instanceof ApiError && revealError.status === 403;

  return (
    <section class="panel" aria-label={`Variables of ${env.name}`}>
      <div class="toolbar">
        <input
          class="input input-search"
          type="search"
          placeholder="Filter keys"
          aria-label="Filter keys"
          value={filter}
          onInput={(e) => setFilter(e.currentTarget.value)}
        />
        <div class="toolbar-spacer" />
        <Button size="sm" onClick={() => reveal(null)} disabled={forbiddenReveal} aria-pressed={revealAll}>
          {revealAll ? 'Hide values' : 'Reveal all'}
        </Button>
        <Button size="sm" onClick={() => setImporting(true)}>
          Import .env
        </Button>
        <ExportMenu base={base} />
        <input
          type="color"
          class="env-color"
          aria-label={`Colour of ${env.name}`}
          title={`Colour of ${env.name}`}
          value={env.color}
          onChange={(e) => onColor(e.currentTarget.value)}
        />
        {canProtect && (
          <Button size="sm" onClick={onToggleProtect}>
            {env.protected ? 'Unprotect' : 'Protect'}
          </Button>
        )}
        <Button size="sm" variant="ghost" onClick={onDeleteEnv}>
          Delete environment
        </Button>
      </div>
      {forbiddenReveal && <p class="note">Values are masked: revealing them needs write permission on {env.name}.</p>}
      <AddVarRow
        onAdd={async (item) => {
          const res = await api.post<{ created: string[]; updated: string[] }>(`/projects/${seg(project.id)}/vars`, {
            envs: [env.name],
            items: [item],
          });
          toast(res.created.length ? `${item.key} added` : `${item.key} updated`);
          await load();
        }}
      />
      {selected.size > 0 && (
        <section class="bulkbar" aria-label="Selection">
          <span>{selected.size} selected</span>
          <Button size="sm" variant="danger" onClick={() => setConfirmBulk(true)}>
            Delete selected
          </Button>
          <Button size="sm" variant="ghost" onClick={() => setSelected(new Set())}>
            Clear
          </Button>
        </section>
      )}
      {loadError ? (
        <ErrorBanner error={loadError} onRetry={load} />
      ) : !vars ? (
        <Spinner />
      ) : vars.length === 0 ? (
        <Empty
          title={`No variables in ${env.name}`}
          action={<Button onClick={() => setImporting(true)}>Import a .env file</Button>}
        >
          Add one above, or paste a whole .env file.
        </Empty>
      ) : (
        <div class="table-wrap">
          <table class="table vars-table">
            <thead>
              <tr>
                <th class="col-check">
                  <input
                    type="checkbox"
                    aria-label="Select all"
                    checked={allSelected}
                    onChange={() => setSelected(allSelected ? new Set() : new Set(shown.map((v) => v.key)))}
                  />
                </th>
                <th>Key</th>
                <th>Value</th>
                <th class="col-type">Type</th>
                <th class="col-meta">Updated</th>
                <th class="col-actions">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((v) => {
                const p = plain?.get(v.key);
                const show = (revealAll || revealed.has(v.key)) && p ? p : v;
                return editing === v.key ? (
                  <EditVarRow
                    key={v.key}
                    v={v}
                    plaintext={p?.value ?? (v.type === 'plain' ? v.value : null)}
                    onCancel={() => setEditing(null)}
                    onSave={async (body) => {
                      await api.put(`${base}/vars/${seg(v.key)}`, body);
                      setEditing(null);
                      toast(`${v.key} saved`);
                      await load();
                    }}
                  />
                ) : (
                  <tr key={v.key} class={selected.has(v.key) ? 'selected' : ''}>
                    <td class="col-check">
                      <input
                        type="checkbox"
                        aria-label={`Select ${v.key}`}
                        checked={selected.has(v.key)}
                        onChange={() => {
                          const n = new Set(selected);
                          if (n.has(v.key)) n.delete(v.key);
                          else n.add(v.key);
                          setSelected(n);
                        }}
                      />
                    </td>
                    <td class="key-cell">
                      <code class="var-key">{v.key}</code>
                      {v.expiresAt && <ExpiryMarker at={v.expiresAt} />}
                    </td>
                    <td class="value-cell">
                      <div class="value-line">
                        <code
                          class={`var-value ${show.value === '***' ? 'masked' : ''}`}
                          data-testid={`value-${v.key}`}
                        >
                          {show.value === '***' ? '••••••••' : show.value || <span class="muted">(empty)</span>}
                        </code>
                        {v.type === 'secret' && !revealAll && (
                          <button
                            type="button"
                            class="icon-btn"
                            aria-label={`${revealed.has(v.key) ? 'Hide' : 'Reveal'} ${v.key}`}
                            title={revealed.has(v.key) ? 'Hide' : 'Reveal'}
                            disabled={forbiddenReveal}
                            onClick={() => reveal(v.key)}
                          >
                            <Icon name={revealed.has(v.key) ? 'eyeOff' : 'eye'} />
                          </button>
                        )}
                      </div>
                      {show.resolveError ? (
                        <div class="resolved resolved-error" role="note">
                          ⚠ {show.resolveError}
                        </div>
                      ) : show.resolvedValue !== undefined ? (
                        <div class="resolved" data-testid={`resolved-${v.key}`}>
                          → <code>{show.resolvedValue === '***' ? '••••••••' : show.resolvedValue}</code>
                        </div>
                      ) : null}
                    </td>
                    <td class="col-type">
                      <TypeToggle
                        type={v.type}
                        onToggle={async () => {
                          try {
                            await api.put(`${base}/vars/${seg(v.key)}`, {
                              type: v.type === 'secret' ? 'plain' : 'secret',
                            });
                            await load();
                          } catch (e) {
                            toast(e instanceof Error ? e.message : String(e), 'error');
                          }
                        }}
                      />
                    </td>
                    <td class="col-meta muted small">{relativeTime(v.updatedAt)}</td>
                    <td class="col-actions">
                      <div class="row-actions">
                        <Button
                          size="sm"
                          variant="ghost"
                          onClick={() => setEditing(v.key)}
                          aria-label={`Edit ${v.key}`}
                        >
                          Edit
                        </Button>
                        <Button
                          size="sm"
                          variant="ghost"
                          onClick={() => setHistoryKey(v.key)}
                          aria-label={`History of ${v.key}`}
                        >
                          History
                        </Button>
                        <Button
                          size="sm"
                          variant="ghost"
                          class="danger-text"
                          onClick={() => setDeleteKey(v.key)}
                          aria-label={`Delete ${v.key}`}
                        >
                          Delete
                        </Button>
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {historyKey && (
        <HistoryModal
          base={base}
          varKey={historyKey}
          onClose={() => setHistoryKey(null)}
          onRestored={async () => {
            setHistoryKey(null);
            toast(`${historyKey} restored`);
            await load();
          }}
        />
      )}
      {importing && (
        <ImportModal
          project={project}
          envs={envs}
          defaultEnv={env.name}
          onClose={() => setImporting(false)}
          onSaved={async () => {
            await load();
          }}
        />
      )}
      {deleteKey && (
        <Confirm
          title={`Delete ${deleteKey}?`}
          action="Delete"
          body={<p>It stays in the history of {env.name} and can be restored from there.</p>}
          onClose={() => setDeleteKey(null)}
          onConfirm={async () => {
            await api.del(`${base}/vars/${seg(deleteKey)}`);
            setDeleteKey(null);
            toast(`${deleteKey} deleted`);
            await load();
          }}
        />
      )}
      {confirmBulk && (
        <Confirm
          title={`Delete ${selected.size} variables?`}
          action={`Delete ${selected.size}`}
          body={
            <p>
              {[...selected].slice(0, 8).join(', ')}
              {selected.size > 8 ? ` and ${selected.size - 8} more` : ''} will be deleted from {env.name}.
            </p>
          }
          onClose={() => setConfirmBulk(false)}
          onConfirm={async () => {
            const res = await api.post<{ deleted: number }>(`${base}/vars:bulkDelete`, { keys: [...selected] });
            setConfirmBulk(false);
            setSelected(new Set());
            toast(`${res.deleted} deleted`);
            await load();
          }}
        />
      )}
    </section>
  );
}

function ExpiryMarker({ at }: { at: string }) {
  const { label, tone } = expiresIn(at);
  return (
    <span class={`expiry expiry-${tone}`} title={new Date(at).toLocaleString()}>
      {label}
    </span>
  );
}

function TypeToggle({ type, onToggle }: { type: VarType; onToggle: () => void }) {
  return (
    <button
      type="button"
      class={`type-toggle type-${type}`}
      onClick={onToggle}
      title={`Make it ${type === 'secret' ? 'plain' : 'secret'}`}
      aria-label={`Type ${type}; switch to ${type === 'secret' ? 'plain' : 'secret'}`}
    >
      {type}
    </button>
  );
}

function AddVarRow({ onAdd }: { onAdd: (item: { key: string; value: string; type: VarType }) => Promise<void> }) {
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [type, setType] = useState<VarType>('secret');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <form
      class="add-var"
      aria-label="Add a variable"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          await onAdd({ key, value, type });
          setKey('');
          setValue('');
        } catch (err) {
          setError(err);
        }
        setBusy(false);
      }}
    >
      <input
        class="input mono"
        placeholder="KEY"
        aria-label="New key"
        value={key}
        onInput={(e) => setKey(e.currentTarget.value)}
        required
        pattern="[A-Za-z_][A-Za-z0-9_]*"
        title="Letters, digits and _; not starting with a digit"
      />
      <input
        class="input mono"
        placeholder="value — ${OTHER_KEY} references another variable"
        aria-label="New value"
        value={value}
        onInput={(e) => setValue(e.currentTarget.value)}
      />
      <select class="input" aria-label="Type" value={type} onChange={(e) => setType(e.currentTarget.value as VarType)}>
        <option value="secret">secret</option>
        <option value="plain">plain</option>
      </select>
      <Button type="submit" variant="primary" busy={busy}>
        Add
      </Button>
      {error ? (
        <div class="add-var-error">
          <FormError error={error} />
        </div>
      ) : null}
    </form>
  );
}

function toDateInput(ts: string | null): string {
  return ts ? ts.slice(0, 10) : '';
}

function EditVarRow({
  v,
  plaintext,
  onSave,
  onCancel,
}: {
  v: Variable;
  plaintext: string | null;
  onSave: (body: Record<string, unknown>) => Promise<void>;
  onCancel: () => void;
}) {
  const [value, setValue] = useState(plaintext ?? '');
  const [type, setType] = useState<VarType>(v.type);
  const [expiry, setExpiry] = useState(toDateInput(v.expiresAt));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const submit = async () => {
    const body: Record<string, unknown> = {};
    if (plaintext === null ? value !== '' : value !== plaintext) body.value = value;
    if (type !== v.type) body.type = type;
    if (expiry !== toDateInput(v.expiresAt)) {
      if (expiry) body.expiresAt = new Date(`${expiry}T00:00:00`).toISOString();
      else body.clearExpiry = true;
    }
    if (Object.keys(body).length === 0) return onCancel();
    setBusy(true);
    setError(undefined);
    try {
      await onSave(body);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <tr class="editing">
      <td class="col-check" />
      <td class="key-cell">
        <code class="var-key">{v.key}</code>
      </td>
      <td colSpan={4}>
        <form
          class="edit-var"
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
          onKeyDown={(e) => e.key === 'Escape' && onCancel()}
        >
          <textarea
            class="input mono"
            aria-label={`Value of ${v.key}`}
            rows={Math.min(6, Math.max(1, value.split('\n').length))}
            placeholder={plaintext === null ? 'Enter a new value (the current one is hidden)' : ''}
            value={value}
            onInput={(e) => setValue(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void submit();
            }}
            autofocus
          />
          <div class="edit-var-row">
            <label class="inline-field">
              Type
              <select class="input" value={type} onChange={(e) => setType(e.currentTarget.value as VarType)}>
                <option value="secret">secret</option>
                <option value="plain">plain</option>
              </select>
            </label>
            <label class="inline-field">
              Expires
              <input
                class="input"
                type="date"
                aria-label={`Expiry of ${v.key}`}
                value={expiry}
                onInput={(e) => setExpiry(e.currentTarget.value)}
              />
            </label>
            {expiry && (
              <button type="button" class="linklike" onClick={() => setExpiry('')}>
                No expiry
              </button>
            )}
            {expiry && <Pill tone="neutral">{expiresIn(new Date(`${expiry}T00:00:00`).toISOString()).label}</Pill>}
            <div class="toolbar-spacer" />
            <Button onClick={onCancel}>Cancel</Button>
            <Button type="submit" variant="primary" busy={busy}>
              Save
            </Button>
          </div>
          <FormError error={error} />
        </form>
      </td>
    </tr>
  );
}

function ExportMenu({ base }: { base: string }) {
  const toast = useToast();
  const [open, setOpen] = useState(false);
  const download = async (format: 'dotenv' | 'k8s', reveal: boolean) => {
    setOpen(false);
    try {
      const { blob, filename } = await api.download(`${base}/export`, {
        format,
        ...(reveal ? { reveal: 'true' } : {}),
      });
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = filename;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    } catch (e) {
      toast(e instanceof Error ? e.message : String(e), 'error');
    }
  };
  return (
    <div class="dropdown">
      <Button size="sm" aria-haspopup="menu" aria-expanded={open} onClick={() => setOpen(!open)}>
        Export ▾
      </Button>
      {open && (
        <div class="menu menu-right" role="menu" onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}>
          <button type="button" role="menuitem" class="menu-item" onClick={() => download('dotenv', true)}>
            .env (values)
          </button>
          <button type="button" role="menuitem" class="menu-item" onClick={() => download('k8s', true)}>
            Kubernetes Secret (values)
          </button>
          <button type="button" role="menuitem" class="menu-item" onClick={() => download('dotenv', false)}>
            .env (secrets masked)
          </button>
        </div>
      )}
    </div>
  );
}
