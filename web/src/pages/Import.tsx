import type { Environment, Project, Variable } from '@svcenv/contract';
import { CONTEXT_KEYS } from '@svcenv/contract/constants';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { listVars, upsertVars } from '../api/variables.js';
import { useSaveValidated } from '../components/Unresolved.js';
import { useSubmit } from '../hooks.js';
import { guessType, previewDotenv } from '../lib/dotenv-preview.js';
import { isMasked } from '../lib/mask.js';
import { useToast } from '../toast.js';
import { Button, FormError, Modal, Pill } from '../ui.js';

/** D28a: what a pull or export appends; a pulled file pasted back must not store them (as `svcenv push`). */
const CONTEXT: ReadonlySet<string> = new Set(CONTEXT_KEYS);

type VarType = Variable['type'];
/** Per environment, each existing key's (plain) value, null when masked, and its type. */
type Existing = Map<string, Map<string, { value: string | null; type: VarType }>>;
/** What one environment's save answered: the server's own lists, or why it failed. */
type EnvResult = { env: string; created: string[]; updated: string[] } | { env: string; error: unknown };

/**
 * Paste or upload a .env file and bulk-save it into one or several environments. The preview shows what
 * each environment gets before anything is sent; the server's own created/updated lists are shown after.
 *
 * Each key has its own type, chosen in the preview (a guess from its name to start with: API_TOKEN secret,
 * LOG_LEVEL plain). Nothing changes silently: existing keys keep their type unless the user ticks the box
 * that changes them (and the preview names each key whose type would change); each environment is saved by its
 * own request, so every key keeps its type per environment and every summary line is exactly that
 * environment's answer, a key counted once, as created or as updated. The context variables are left out.
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
  // The person's choices, by key; a key not chosen yet takes its guess (guessType).
  const [chosen, setChosen] = useState<ReadonlyMap<string, VarType>>(new Map());
  const [retype, setRetype] = useState(false);
  const [existing, setExisting] = useState<Existing>(new Map());
  const { busy, error, setError, submit } = useSubmit();
  const save = useSaveValidated();
  const [result, setResult] = useState<EnvResult[] | null>(null);

  // The current keys of each chosen environment (masked listing: a secret's value counts as changed).
  useEffect(() => {
    for (const env of targets) {
      if (existing.has(env)) continue;
      listVars(project.id, env)
        .then((r) =>
          setExisting((m) =>
            new Map(m).set(
              env,
              new Map(r.vars.map((v) => [v.key, { value: isMasked(v.value) ? null : v.value, type: v.type }])),
            ),
          ),
        )
        .catch(setError);
    }
  }, [targets, existing, project.id]);

  const values = useMemo(
    () => new Map([...existing].map(([env, m]) => [env, new Map([...m].map(([k, v]) => [k, v.value]))])),
    [existing],
  );
  const parsed = useMemo(() => (text.trim() ? previewDotenv(text, targets, values) : null), [text, targets, values]);
  // The context keys of a pulled file are dropped before anything else looks at the items.
  const skipped = parsed?.ok ? parsed.items.filter((i) => CONTEXT.has(i.key)).map((i) => i.key) : [];
  const preview = useMemo(() => {
    if (!parsed?.ok || skipped.length === 0) return parsed;
    const keep = (k: string) => !CONTEXT.has(k);
    const items = parsed.items.filter((i) => keep(i.key));
    if (items.length === 0) {
      return {
        ok: false as const,
        error: `Only svcenv's context variables (${skipped.join(', ')}): nothing to import.`,
      };
    }
    return {
      ok: true as const,
      items,
      envs: parsed.envs.map((p) => ({
        env: p.env,
        created: p.created.filter(keep),
        updated: p.updated.filter(keep),
        unchanged: p.unchanged.filter(keep),
      })),
    };
  }, [parsed]);
  const pasted = new Map(preview?.ok ? preview.items.map((i) => [i.key, i.value]) : []);
  /** The type chosen for a key in the preview (its guess until the person picks one). */
  const typeOf = (key: string): VarType => chosen.get(key) ?? guessType(key, pasted.get(key) ?? '');
  /** The type each key is saved with in `env`: its own unless the user chose to change existing ones. */
  const typeIn = (env: string, key: string): VarType => (!retype && existing.get(env)?.get(key)?.type) || typeOf(key);
  /** Existing keys whose type the save would change, per environment. */
  const retyped = (env: string) =>
    preview?.ok
      ? preview.items
          .map((i) => ({ key: i.key, from: existing.get(env)?.get(i.key)?.type }))
          .filter((c): c is { key: string; from: VarType } => c.from !== undefined && c.from !== typeIn(env, c.key))
      : [];
  /** The chosen environments in which a key already exists (it keeps its type there unless retyped). */
  const existsIn = (key: string) => targets.filter((env) => existing.get(env)?.has(key));
  const setAll = (t: VarType | null) =>
    setChosen(t === null || !preview?.ok ? new Map() : new Map(preview.items.map((i) => [i.key, t])));

  return (
    <Modal title="Import variables" onClose={onClose} wide>
      {result ? (
        <div class="stack">
          {result.map((r) =>
            'error' in r ? (
              <div key={r.env} class="alert alert-error" role="alert">
                Nothing saved into {r.env}: {r.error instanceof Error ? r.error.message : String(r.error)}
              </div>
            ) : (
              <div key={r.env} class="stack-tight" data-testid={`import-result-${r.env}`}>
                <div class="alert alert-ok" role="status">
                  Saved into {r.env}: {r.created.length} created, {r.updated.length} updated.
                </div>
                <KeyList label="Created" keys={r.created} tone="ok" />
                <KeyList label="Updated" keys={r.updated} tone="info" />
              </div>
            ),
          )}
          <div class="row-end">
            <Button variant="primary" onClick={onClose}>
              Done
            </Button>
          </div>
        </div>
      ) : (
        <form
          class="stack"
          onSubmit={submit(async () => {
            if (!preview?.ok || targets.length === 0) return;
            const out: EnvResult[] = [];
            for (const env of targets) {
              try {
                const items = preview.items.map((i) => ({ ...i, type: typeIn(env, i.key) }));
                const res = await save((validate) => upsertVars(project.id, { envs: [env], items }, { validate }));
                out.push({ env, created: res.created, updated: res.updated });
              } catch (e) {
                // One environment refused (approval, protection): the others are still reported as saved.
                out.push({ env, error: e });
              }
            }
            setResult(out);
            const failed = out.filter((r) => 'error' in r).length;
            toast(
              failed
                ? `Import failed in ${failed} of ${out.length} environments`
                : `Imported into ${targets.join(', ')}`,
              failed ? 'error' : 'ok',
            );
            await onSaved();
          })}
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
              <label class="check">
                <input type="checkbox" checked={retype} onChange={() => setRetype(!retype)} />
                Also give existing keys the types chosen below
              </label>
              <p class="field-hint">Otherwise a key that already exists keeps its own type.</p>
            </div>
          </div>
          {preview && !preview.ok && (
            <div class="alert alert-error" role="alert">
              {preview.error}
            </div>
          )}
          {skipped.length > 0 && preview?.ok && (
            <p class="note" data-testid="import-skipped">
              Left out {skipped.join(', ')}: svcenv adds {skipped.length === 1 ? 'it' : 'them'} to every pull and export
              of the environment (as <code>svcenv push</code> does).
            </p>
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
                  <TypeChanges changes={retyped(p.env).map((c) => ({ ...c, to: typeIn(p.env, c.key) }))} />
                </div>
              ))}
              <fieldset class="fieldset import-types" data-testid="import-types">
                <legend>Type of each key</legend>
                <p class="field-hint">
                  Guessed from the name: keys with SECRET, TOKEN, PASSWORD, KEY or PRIVATE in them (and URLs with a
                  password) are secret, masked for readers; the others are plain. Change any of them here.
                </p>
                <div class="row">
                  <Button size="sm" onClick={() => setAll('secret')}>
                    All secret
                  </Button>
                  <Button size="sm" onClick={() => setAll('plain')}>
                    All plain
                  </Button>
                  <Button size="sm" variant="ghost" onClick={() => setAll(null)}>
                    Guess from names
                  </Button>
                </div>
                <ul class="import-type-list">
                  {preview.items.map((i) => {
                    const kept = retype ? [] : existsIn(i.key);
                    return (
                      <li key={i.key}>
                        <code class="var-key">{i.key}</code>
                        <select
                          class="input input-sm"
                          aria-label={`Type of ${i.key}`}
                          value={typeOf(i.key)}
                          onChange={(e) => setChosen(new Map(chosen).set(i.key, e.currentTarget.value as VarType))}
                        >
                          <option value="secret">secret</option>
                          <option value="plain">plain</option>
                        </select>
                        {kept.length > 0 && (
                          <span class="muted small">exists in {kept.join(', ')}: keeps its type there</span>
                        )}
                      </li>
                    );
                  })}
                </ul>
              </fieldset>
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

/** The existing keys whose type the save changes; making a secret plain exposes it, so that is a warning. */
function TypeChanges({ changes }: { changes: { key: string; from: VarType; to: VarType }[] }) {
  if (changes.length === 0) return null;
  return (
    <>
      {(['secret', 'plain'] as const).map((to) => {
        const list = changes.filter((c) => c.to === to);
        if (list.length === 0) return null;
        return (
          <div key={to} class={`alert ${to === 'plain' ? 'alert-warn' : 'alert-info'} type-changes`} role="note">
            {list.length} existing key{list.length === 1 ? '' : 's'} become{list.length === 1 ? 's' : ''} {to}:{' '}
            {list.map((c) => c.key).join(', ')}
            {to === 'plain' && '. Their values will be shown unmasked to everyone who can read the environment.'}
          </div>
        );
      })}
    </>
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
