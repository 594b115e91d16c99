import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useCallback, useContext, useState } from 'preact/hooks';
import { Cancelled } from './hooks.js';

// Toasts: short confirmations of what just happened, announced to screen readers.
/** A button in a toast, such as "Undo" after a delete: it runs once, then the toast goes. */
export interface ToastAction {
  label: string;
  run: () => Promise<unknown>;
}
interface Toast {
  id: number;
  text: string;
  tone: 'ok' | 'error';
  action?: ToastAction | undefined;
}
type Push = (text: string, tone?: 'ok' | 'error', action?: ToastAction) => void;
const ToastCtx = createContext<Push>(() => {});
export function ToastHost({ children }: { children: ComponentChildren }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const push = useCallback<Push>((text, tone = 'ok', action) => {
    const id = Math.random();
    setToasts((t) => [...t.slice(-1), { id, text, tone, action }]);
    // A toast with an action stays long enough to be read and reached (keyboard included).
    setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), action ? 10_000 : 3500);
  }, []);
  const runAction = async (t: Toast) => {
    setToasts((all) => all.filter((x) => x.id !== t.id));
    try {
      await t.action?.run();
    } catch (e) {
      push(e instanceof Error ? e.message : String(e), 'error');
    }
  };
  return (
    <ToastCtx.Provider value={push}>
      {children}
      <div class="toasts" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} class={`toast toast-${t.tone}`}>
            {t.text}
            {t.action && (
              <button type="button" class="toast-action" onClick={() => runAction(t)}>
                {t.action.label}
              </button>
            )}
          </div>
        ))}
      </div>
    </ToastCtx.Provider>
  );
}
export const useToast = () => useContext(ToastCtx);

/**
 * Runs a one-click action that has no form to show its failure in (a switch, a menu item, a row button):
 * a failure becomes an error toast. Resolves either way, so the caller can reload after it.
 */
export function useAction(): (action: () => Promise<unknown>) => Promise<void> {
  const toast = useToast();
  return useCallback(
    async (action) => {
      try {
        await action();
      } catch (e) {
        if (!(e instanceof Cancelled)) toast(e instanceof Error ? e.message : String(e), 'error');
      }
    },
    [toast],
  );
}
