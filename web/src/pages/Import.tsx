import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { previewDotenv } from '../lib/dotenv-preview.js';
import type { Environment, Project, Variable } from '../types.js';
import { Button, FormError, Modal, Pill, useToast } from '../ui.js';

/**
 * Paste or upload a .env file and bulk-save it into one or several environments. The preview shows what
 * each environment gets before anything is sent; the server's own created/updated lists are shown after.
 */
export function ImportModal({
  project,
  envs,
  defaultEnv,
  onClose,
  onSaved,
}: {
  project: Project;
  envs: Environment[];
  defaultEnv: string;
  onClose: () => void;
  onSaved: () => Promise<void>;
}) {
  const toast = useToast();
  const [text, setText] = useState('');
  const [targets, setTargets] = useState<string[]>([defaultEnv]);
  const [type, setType] = useState<Variable['type']>('secret');
  const [existing, setExisting] = useState(new Map<string, Map<string, string | null>>());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [result, setResult] = useState<{ created: string[]; updated: string[] } | null>(null);

  // The current keys of each chosen environment (masked listing: a secret's value counts as changed).
  useEffect(() => {
    for (const env of targets) {
      if (existing.has(env)) continue;
      api
        .get<{ vars: Variable[] }>(`/projects/${seg(project.id)}/envs/${seg(env)}/vars`)
        .then((r) =>
          setExisting((m) =>
            new Map(m).set(env, new Map(r.vars.map((v) => [v.key, v.value === '***' ? null : v.value]))),
          ),
        )
        .catch(setError);
    }
  }, [targets, existing, project.id]);

  const preview = useMemo(
    () => (text.trim() ? previewDotenv(text, targets, existing) : null),
    [text, targets, existing],
  );

  return (
    <Modal title="Import variables" onClose={onClose} wide>
      {result ? (
        <div class="stack">
          <div class="alert alert-ok" role="status">
            Saved into {targets.join(', ')}: {result.created.length} created, {result.updated.length} updated.
          </div>
          <KeyList label="Created" keys={result.created} tone="ok" />
          <KeyList label="Updated" keys={result.updated} tone="info" />
          <div class="row-end">
            <Button variant="primary" onClick={onClose}>
              Done
            </Button>
          </div>
        </div>
      ) : (
        <form
          class="stack"
          onSubmit={async (e) => {
            e.preventDefault();
            if (!preview?.ok || targets.length === 0) return;
            setBusy(true);
            setError(undefined);
            try {
              const res = await api.post<{ created: string[]; updated: string[] }>(
                `/projects/${seg(project.id)}/vars`,
                {
                  envs: targets,
                  items: preview.items.map((i) => ({ ...i, type })),
                },
              );
              setResult(res);
              toast(`${res.created.length} created, ${res.updated.length} updated`);
              await onSaved();
            } catch (err) {
              setError(err);
            }
            setBusy(false);
          }}
        >
          <div class="import-grid">
            <div class="stack">
              <label class="field">
                <span class="field-label">Paste a .env file</span>
                <textarea
                  class="input mono"
                  rows={10}
                  placeholder={'DATABASE_URL=postgres://…\nAPI_KEY="…"\n# comments are fine'}
                  value={text}
                  onInput={(e) => setText(e.currentTarget.value)}
                  spellcheck={false}
                  autofocus
                />
              </label>
              <label class="file-pick">
                <span>…or upload a file</span>
                <input
                  type="file"
                  accept=".env,text/plain,*/*"
                  onChange={async (e) => {
                    const f = e.currentTarget.files?.[0];
                    if (f) setText(await f.text());
                  }}
                />
              </label>
            </div>
            <div class="stack">
              <fieldset class="fieldset">
                <legend>Save into</legend>
                {envs.map((env) => (
                  <label key={env.name} class="check">
                    <input
                      type="checkbox"
                      checked={targets.includes(env.name)}
                      onChange={() =>
                        setTargets(
                          targets.includes(env.name) ? targets.filter((t) => t !== env.name) : [...targets, env.name],
                        )
                      }
                    />
                    <span class="env-dot" style={{ background: env.color }} aria-hidden="true" />
                    {env.name}
                  </label>
                ))}
              </fieldset>
              <label class="field">
                <span class="field-label">Save as</span>
                <select class="input" value={type} onChange={(e) => setType(e.currentTarget.value as Variable['type'])}>
                  <option value="secret">secret (masked)</option>
                  <option value="plain">plain</option>
                </select>
              </label>
            </div>
          </div>
          {preview && !preview.ok && (
            <div class="alert alert-error" role="alert">
              {preview.error}
            </div>
          )}
          {preview?.ok && (
            <section class="preview" aria-label="Preview">
              <h3>
                Preview: {preview.items.length} variable{preview.items.length === 1 ? '' : 's'}
              </h3>
              {preview.envs.map((p) => (
                <div key={p.env} class="preview-env">
                  <strong>{p.env}</strong>
                  <span class="muted small">
                    {p.created.length} new, {p.updated.length + p.unchanged.length} existing
                  </span>
                  <KeyList label="New" keys={p.created} tone="ok" />
                  <KeyList label="Updated" keys={p.updated} tone="info" />
                  <KeyList label="Unchanged" keys={p.unchanged} tone="neutral" />
                </div>
              ))}
            </section>
          )}
          <FormError error={error} />
          <div class="row-end">
            <Button onClick={onClose}>Cancel</Button>
            <Button type="submit" variant="primary" busy={busy} disabled={!preview?.ok || targets.length === 0}>
              Save {preview?.ok ? preview.items.length : ''} variable
              {preview?.ok && preview.items.length === 1 ? '' : 's'}
            </Button>
          </div>
        </form>
      )}
    </Modal>
  );
}

function KeyList({ label, keys, tone }: { label: string; keys: string[]; tone: string }) {
  if (keys.length === 0) return null;
  return (
    <div class="keylist">
      <span class="keylist-label">{label}</span>
      {keys.map((k) => (
        <Pill key={k} tone={tone}>
          {k}
        </Pill>
      ))}
    </div>
  );
}
