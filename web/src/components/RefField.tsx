/**
 * References across environments in the variables screen (D49): the scope a value is written in
 * (`RefScope`, provided by the environment's panel), a value field that completes `${` (`RefField`), and the
 * list of where a shown value's references point and whether they can be read (`RefTargets`).
 *
 * Completion offers this environment's keys, `env.KEY` for the project's other environments the user can
 * read and `slug.env.KEY` for other projects' readable environments. Other key lists are loaded only when
 * their prefix is typed, once per panel, and only their keys are kept: never a value.
 */

import type { Project } from '@svcenv/contract';
import { createContext, type Ref } from 'preact';
import { useContext, useEffect, useId, useMemo, useRef, useState } from 'preact/hooks';
import { listProjects } from '../api/projects.js';
import { listVars } from '../api/variables.js';
import { canRead } from '../lib/access.js';
import { type Completion, completions, crossReferences, openReference, targetLabel } from '../lib/references.js';

export interface RefScopeValue {
  project: Project;
  env: string;
  keys: readonly string[];
  /** The workspace's projects (each with the user's access), loaded once. */
  projects: () => Promise<Project[]>;
  /** The keys of `env` or `slug.env` (empty when it cannot be listed), loaded once. */
  keysOf: (scope: string) => Promise<string[]>;
}

export const RefScope = createContext<RefScopeValue | null>(null);

/** The scope of one environment's panel; its caches last as long as the panel shows that environment. */
export function useRefScope(project: Project, env: string, keys: ReadonlySet<string>): RefScopeValue {
  const caches = useMemo(() => {
    let projects: Promise<Project[]> | null = null;
    const keyLists = new Map<string, Promise<string[]>>();
    const loadProjects = () => {
      projects ??= listProjects().then(
        (r) => r.projects,
        () => [],
      );
      return projects;
    };
    const keysOf = (scope: string) => {
      let found = keyLists.get(scope);
      if (!found) {
        const [a, b] = scope.split('.');
        found = (async () => {
          const target = b === undefined ? { id: project.id, env: a ?? '' } : await projectEnv(a ?? '', b);
          if (!target) return [];
          // Only the keys are kept; the listing (masked) is dropped right here.
          return (await listVars(target.id, target.env)).vars.map((v) => v.key).sort();
        })().catch(() => []);
        keyLists.set(scope, found);
      }
      return found;
    };
    const projectEnv = async (slug: string, env: string) => {
      const p = (await loadProjects()).find((x) => x.slug === slug);
      return p && canRead(p, env) ? { id: p.id, env } : null;
    };
    return { projects: loadProjects, keysOf };
  }, [project.id, env]);
  const keyList = useMemo(() => [...keys].sort(), [keys]);
  return useMemo(() => ({ project, env, keys: keyList, ...caches }), [project, env, keyList, caches]);
}

type Field = HTMLInputElement | HTMLTextAreaElement;

interface FieldProps {
  /** A textarea (the edit row) instead of an input (the add form). */
  multiline?: boolean;
  /**
   * An input that grows into a textarea for a multi-line value (the add form): when text with line breaks is
   * pasted (an input would join the lines) and on Shift+Enter. It stays one until the value is emptied.
   */
  grow?: boolean;
  value: string;
  onValue: (value: string) => void;
  /** Keys the completion list does not take (it takes arrows, Enter and Escape while it is open). */
  onKeyDown?: (e: KeyboardEvent) => void;
  class?: string;
  placeholder?: string;
  'aria-label'?: string;
  rows?: number;
  autofocus?: boolean;
}

/** An input (or textarea) for a value; typing `${` opens a list of references (arrows, Enter, Escape). */
export function RefField({ multiline, grow, value, onValue, onKeyDown, rows, ...rest }: FieldProps) {
  const scope = useContext(RefScope);
  const field = useRef<Field>(null);
  const listId = useId();
  const [caret, setCaret] = useState<number | null>(null);
  const [active, setActive] = useState(0);
  const [dismissed, setDismissed] = useState<string | null>(null);
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [loaded, setLoaded] = useState<Map<string, string[]>>(new Map());
  const moveCaret = useRef<number | null>(null);
  const [grown, setGrown] = useState(false);
  const multi = !!multiline || (!!grow && (grown || value.includes('\n')));
  // The element changes (input → textarea): the new one takes the focus and the caret where the text went.
  const refocus = useRef(false);
  useEffect(() => {
    if (!refocus.current || !field.current) return;
    refocus.current = false;
    field.current.focus();
  }, [multi]);
  useEffect(() => {
    if (grow && value === '') setGrown(false);
  }, [grow, value === '']);
  /** Puts `text` where the selection is, as typing would, and grows into a textarea when it holds a line. */
  const insert = (el: Field, text: string) => {
    const start = el.selectionStart ?? value.length;
    const end = el.selectionEnd ?? start;
    const at = start + text.length;
    moveCaret.current = at;
    setCaret(at);
    if (!multi) {
      refocus.current = true;
      setGrown(true);
    }
    onValue(`${value.slice(0, start)}${text}${value.slice(end)}`);
  };

  const open = scope && caret !== null && dismissed !== value ? openReference(value, caret) : null;
  const sources = useMemo(() => {
    if (!scope) return null;
    const envs = scope.project.envs.filter((e) => e !== scope.env && canRead(scope.project, e));
    const others = (projects ?? [])
      .filter((p) => p.id !== scope.project.id)
      .map((p) => ({ slug: p.slug, envs: p.envs.filter((e) => canRead(p, e)) }));
    return { keys: scope.keys, envs, projects: others, loaded };
  }, [scope, projects, loaded]);
  const found = open && sources ? completions(open.prefix, sources) : { items: [], load: [] };
  const items = found.items.slice(0, 50);
  const loading = found.load.length > 0 || (open !== null && projects === null);

  // The projects are asked for once the user types `${`; a key list once its prefix is typed.
  useEffect(() => {
    if (open && scope && projects === null) void scope.projects().then(setProjects);
  }, [open !== null, scope]);
  const loadKey = found.load.join(' ');
  useEffect(() => {
    for (const s of found.load) {
      void scope?.keysOf(s).then((keys) => setLoaded((m) => (m.has(s) ? m : new Map(m).set(s, keys))));
    }
  }, [loadKey, scope]);
  useEffect(() => setActive(0), [open?.prefix]);
  useEffect(() => {
    if (moveCaret.current === null || !field.current) return;
    field.current.setSelectionRange(moveCaret.current, moveCaret.current);
    moveCaret.current = null;
  }, [value]);

  const choose = (item: Completion) => {
    if (!open || caret === null) return;
    const closes = item.done && value[caret] !== '}';
    const next = `${value.slice(0, open.start)}${item.insert}${closes ? '}' : ''}${value.slice(caret)}`;
    const at = open.start + item.insert.length + (item.done ? 1 : 0);
    moveCaret.current = at;
    setCaret(at);
    onValue(next);
  };
  const expanded = open !== null && (items.length > 0 || loading);

  const keyDown = (e: KeyboardEvent) => {
    if (expanded && items.length > 0 && (e.key === 'ArrowDown' || e.key === 'ArrowUp')) {
      e.preventDefault();
      setActive((a) => (a + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length);
      return;
    }
    if (expanded && items.length > 0 && e.key === 'Enter' && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      e.stopPropagation();
      const item = items[Math.min(active, items.length - 1)];
      if (item) choose(item);
      return;
    }
    if (expanded && e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      setDismissed(value);
      return;
    }
    if (grow && !multi && e.key === 'Enter' && e.shiftKey) {
      e.preventDefault();
      insert(e.currentTarget as Field, '\n');
      return;
    }
    onKeyDown?.(e);
  };
  const paste = (e: ClipboardEvent) => {
    const text = e.clipboardData?.getData('text/plain') ?? '';
    if (!grow || multi || !/[\r\n]/.test(text)) return;
    // An input would drop the line breaks of a pasted PEM key or certificate.
    e.preventDefault();
    insert(e.currentTarget as Field, text.replace(/\r\n?/g, '\n'));
  };
  const track = (e: Event) => setCaret((e.currentTarget as Field).selectionStart);
  const shared = {
    ...rest,
    value,
    'aria-autocomplete': 'list' as const,
    'aria-controls': listId,
    'aria-activedescendant': expanded && items.length > 0 ? `${listId}-${active}` : undefined,
    autocomplete: 'off',
    spellcheck: false,
    onInput: (e: Event) => {
      onValue((e.currentTarget as Field).value);
      track(e);
    },
    onKeyDown: keyDown,
    onKeyUp: (e: KeyboardEvent) => {
      if (!['ArrowDown', 'ArrowUp', 'Escape', 'Enter'].includes(e.key)) track(e);
    },
    onClick: track,
    onPaste: paste,
    onBlur: () => setCaret(null),
  };
  return (
    <div class="ref-field">
      {multi ? (
        <textarea
          ref={field as Ref<HTMLTextAreaElement>}
          rows={rows ?? Math.min(8, Math.max(2, value.split('\n').length))}
          {...shared}
        />
      ) : (
        <input ref={field as Ref<HTMLInputElement>} role="combobox" aria-expanded={expanded} {...shared} />
      )}
      <div
        class="ref-complete"
        id={listId}
        role="listbox"
        aria-label="References"
        hidden={!expanded}
        data-testid="ref-complete"
      >
        {items.map((item, i) => (
          // Focus stays in the field (aria-activedescendant); a click chooses without taking it.
          // biome-ignore lint/a11y/useFocusableInteractive: the field keeps focus, as a combobox's options do
          <div
            key={item.insert}
            id={`${listId}-${i}`}
            role="option"
            aria-selected={i === active}
            class={`ref-option ${i === active ? 'active' : ''}`}
            onMouseDown={(e) => {
              e.preventDefault();
              choose(item);
            }}
          >
            <code>{item.insert}</code>
            {!item.done && <span class="muted small"> …</span>}
          </div>
        ))}
        {items.length === 0 && loading && <div class="ref-option muted small">Loading keys…</div>}
      </div>
    </div>
  );
}

/**
 * Where each reference to another environment or project points, and whether the user can read it. An
 * unreadable or missing target gets one sentence for both (D49): nothing tells them apart or shows a value.
 */
export function RefTargets({ value, testId }: { value: string; testId: string }) {
  const scope = useContext(RefScope);
  const targets = useMemo(() => crossReferences(value), [value]);
  const [projects, setProjects] = useState<Project[] | null>(null);
  const needsProjects = targets.some((t) => t.project !== null);
  useEffect(() => {
    if (needsProjects && scope) void scope.projects().then(setProjects);
  }, [needsProjects, scope]);
  if (!scope || targets.length === 0) return null;
  const readable = (project: string | null, env: string): boolean | null => {
    if (project === null) return scope.project.envs.includes(env) && canRead(scope.project, env);
    if (projects === null) return null;
    const p = projects.find((x) => x.slug === project);
    return p ? p.envs.includes(env) && canRead(p, env) : false;
  };
  return (
    <ul class="ref-targets" data-testid={testId} aria-label="References">
      {targets.map((t) => {
        const ok = readable(t.project, t.env ?? '');
        return (
          <li key={t.text} class={ok === false ? 'ref-forbidden' : ''}>
            → <code>{targetLabel(t)}</code>{' '}
            {ok === null ? (
              <span class="muted">checking…</span>
            ) : ok ? (
              <span class="muted">readable by you</span>
            ) : (
              <span>⚠ cannot be read with your access, or does not exist</span>
            )}
          </li>
        );
      })}
    </ul>
  );
}
