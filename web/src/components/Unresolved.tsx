/**
 * D67: every save of a value validates its `${...}` references. A refusal (422 UNRESOLVED_REFERENCES,
 * nothing saved) opens one dialog that says, key by key, what is wrong in plain words, and offers "Save
 * anyway" (the same request without validation) or going back to the form, which then shows the refusal
 * beside the field it came from.
 */
import type { UnresolvedReferencesBody } from '@svcenv/contract';
import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useCallback, useContext, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { codeTitle } from '../lib/error-words.js';
import { Button, Modal } from '../ui.js';

type Item = UnresolvedReferencesBody['unresolved'][number];
/** Sends a write, first validated; resolves with what the save that went through answered. */
export type SaveValidated = <T>(send: (validate: boolean) => Promise<T>) => Promise<T>;

interface Pending {
  items: Item[];
  error: ApiError;
  anyway: () => Promise<void>;
  back: () => void;
}

/** The unresolved keys of a refusal, or null for any other error. */
export function unresolvedOf(e: unknown): Item[] | null {
  if (!(e instanceof ApiError) || e.code !== 'UNRESOLVED_REFERENCES') return null;
  const list = (e.body as Partial<UnresolvedReferencesBody> | undefined)?.unresolved;
  return Array.isArray(list) && list.length > 0 ? list : null;
}

/** What each code means, for the line under the server's own words. */
const MEANING: Record<string, string> = {
  REFERENCE_FORBIDDEN: 'Pulls of this environment would fail until it is fixed.',
  REFERENCE_MISSING: 'It would be pulled as an empty value.',
  CIRCULAR_REFERENCE: 'Pulls of this environment would fail until it is fixed.',
  REFERENCE_LIMIT: 'Pulls of this environment would fail until it is fixed.',
  DECRYPT_FAILED: 'Pulls of this environment would fail until it is fixed.',
};

/** The server quotes names between backticks: shown as code. */
function quoted(text: string) {
  return text.split('`').map((part, i) => (i % 2 === 1 ? <code key={i}>{part}</code> : part));
}

const SaveCtx = createContext<SaveValidated>((send) => send(true));

export function useSaveValidated(): SaveValidated {
  return useContext(SaveCtx);
}

export function UnresolvedHost({ children }: { children: ComponentChildren }) {
  const [pending, setPending] = useState<Pending | null>(null);
  const [busy, setBusy] = useState(false);
  const save = useCallback<SaveValidated>(async (send) => {
    try {
      return await send(true);
    } catch (e) {
      const items = unresolvedOf(e);
      if (!items) throw e;
      return new Promise((resolve, reject) => {
        setPending({
          items,
          error: e as ApiError,
          anyway: async () => {
            setBusy(true);
            try {
              resolve(await send(false));
            } catch (again) {
              reject(again);
            } finally {
              setBusy(false);
              setPending(null);
            }
          },
          back: () => {
            setPending(null);
            reject(e);
          },
        });
      });
    }
  }, []);
  return (
    <SaveCtx.Provider value={save}>
      {children}
      {pending && (
        <Modal
          title={pending.items.length === 1 ? 'A reference does not resolve' : 'References do not resolve'}
          onClose={pending.back}
          footer={
            <div class="row-end">
              <Button onClick={pending.back} disabled={busy}>
                Back to editing
              </Button>
              <Button variant="danger" busy={busy} onClick={pending.anyway} data-testid="save-anyway">
                Save anyway
              </Button>
            </div>
          }
        >
          <p>Nothing was saved yet. Fix the value, or save it as it is.</p>
          <ul class="unresolved-list" data-testid="unresolved-list">
            {pending.items.map((u) => (
              <li key={`${u.env}/${u.key}`}>
                <div class="unresolved-key">
                  <code>{u.key}</code>
                  <span class="muted small">
                    {' '}
                    in {u.env} ·{' '}
                    <span data-code={u.code} data-testid={`unresolved-code-${u.key}`}>
                      {codeTitle(u.code)}
                    </span>
                  </span>
                </div>
                <div>{quoted(u.message.startsWith(`${u.key}: `) ? u.message.slice(u.key.length + 2) : u.message)}</div>
                <div class="muted small">{MEANING[u.code] ?? ''}</div>
              </li>
            ))}
          </ul>
        </Modal>
      )}
    </SaveCtx.Provider>
  );
}
