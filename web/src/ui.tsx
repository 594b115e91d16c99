import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, errorMessage } from './api.js';
import { linkHandler } from './router.js';

/** Loading / error / data for one request, with reload. `deps` re-run it. */
export function useAsync<T>(
  fn: () => Promise<T>,
  deps: unknown[],
): {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
  setData: (d: T) => void;
} {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const seq = useRef(0);
  const run = useCallback(async () => {
    const my = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const data = await fn();
      if (my === seq.current) setState({ data, loading: false });
    } catch (error) {
      if (my === seq.current) setState({ error, loading: false });
    }
  }, deps);
  useEffect(() => {
    void run();
  }, [run]);
  return {
    data: state.data,
    error: state.error,
    loading: state.loading,
    reload: run,
    setData: (d: T) => setState({ data: d, loading: false }),
  };
}

type BtnProps = ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: 'primary' | 'secondary' | 'danger' | 'ghost';
  size?: 'sm' | 'md';
  busy?: boolean;
};
export function Button({ variant = 'secondary', size = 'md', busy, children, class: cls, ...rest }: BtnProps) {
  return (
    <button
      type="button"
      {...rest}
      disabled={rest.disabled || busy}
      aria-busy={busy ? 'true' : undefined}
      class={`btn btn-${variant} btn-${size} ${cls ?? ''}`}
    >
      {busy && <span class="spinner spinner-inline" aria-hidden="true" />}
      {children}
    </button>
  );
}

export function Link({ to, children, class: cls }: { to: string; children: ComponentChildren; class?: string }) {
  return (
    <a href={to} onClick={linkHandler(to)} class={cls}>
      {children}
    </a>
  );
}

export function Spinner({ label = 'Loading…' }: { label?: string }) {
  return (
    <div class="loading" role="status">
      <span class="spinner" aria-hidden="true" />
      <span>{label}</span>
    </div>
  );
}

export function ErrorBanner({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null;
  const code = error instanceof ApiError ? error.code : undefined;
  return (
    <div class="alert alert-error" role="alert">
      <div>
        {code && <strong class="alert-code">{code}</strong>}
        <span>{errorMessage(error)}</span>
      </div>
      {onRetry && (
        <Button size="sm" onClick={onRetry}>
          Retry
        </Button>
      )}
    </div>
  );
}

export function Empty({
  title,
  children,
  action,
}: {
  title: string;
  children?: ComponentChildren;
  action?: ComponentChildren;
}) {
  return (
    <div class="empty">
      <div class="empty-icon" aria-hidden="true">
        ◇
      </div>
      <h3>{title}</h3>
      {children && <p>{children}</p>}
      {action}
    </div>
  );
}

/** Renders loading, error or the data. */
export function Async<T>({
  state,
  children,
}: {
  state: { data: T | undefined; error: unknown; loading: boolean; reload: () => void };
  children: (data: T) => ComponentChildren;
}) {
  if (state.error) return <ErrorBanner error={state.error} onRetry={state.reload} />;
  if (state.data === undefined) return <Spinner />;
  return <>{children(state.data)}</>;
}

/** A modal on the native <dialog>: focus is trapped, Escape closes, focus returns where it was. */
export function Modal({
  title,
  onClose,
  children,
  footer,
  wide,
}: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  footer?: ComponentChildren;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      class={`modal ${wide ? 'modal-wide' : ''}`}
      aria-label={title}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <div class="modal-head">
        <h2>{title}</h2>
        <button type="button" class="icon-btn" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </div>
      <div class="modal-body">{children}</div>
      {footer && <div class="modal-foot">{footer}</div>}
    </dialog>
  );
}

/** A labelled input; shows the API error when it names this field. */
export function Field({
  label,
  name,
  error,
  hint,
  children,
}: {
  label: string;
  name?: string;
  error?: unknown;
  hint?: ComponentChildren;
  children: ComponentChildren;
}) {
  const fieldErr = error instanceof ApiError && name && error.field === name ? error.message : undefined;
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the child passed in
    <label class={`field ${fieldErr ? 'field-invalid' : ''}`}>
      <span class="field-label">{label}</span>
      {children}
      {fieldErr ? <span class="field-error">{fieldErr}</span> : hint ? <span class="field-hint">{hint}</span> : null}
    </label>
  );
}

/** The form-level error: shown unless a field already shows it. */
export function FormError({ error, fields = [] }: { error: unknown; fields?: string[] }) {
  if (!error) return null;
  if (error instanceof ApiError && error.field && fields.includes(error.field)) return null;
  return <ErrorBanner error={error} />;
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <Button
      size="sm"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
        } catch {
          // Clipboard refused (insecure origin): select the text instead so Ctrl+C works.
          const sel = getSelection();
          const el = document.querySelector(`[data-copy-source="${CSS.escape(text.slice(0, 16))}"]`);
          if (sel && el) sel.selectAllChildren(el);
        }
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? 'Copied' : label}
    </Button>
  );
}

/** A secret shown once (token plaintext, webhook secret, backup codes). */
export function OnceSecret({ value, note }: { value: string; note: string }) {
  return (
    <div class="once">
      <p class="once-note">{note}</p>
      <div class="once-row">
        <code class="once-value" data-copy-source={value.slice(0, 16)} data-testid="once-secret">
          {value}
        </code>
        <CopyButton text={value} />
      </div>
    </div>
  );
}

export function Pill({ tone = 'neutral', children }: { tone?: string; children: ComponentChildren }) {
  return <span class={`pill pill-${tone}`}>{children}</span>;
}

/** A confirmation that needs the resource's name typed (destructive and irreversible). */
export function TypedConfirm({
  title,
  expected,
  body,
  action,
  onConfirm,
  onClose,
}: {
  title: string;
  expected: string;
  body: ComponentChildren;
  action: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <Modal title={title} onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (typed !== expected) return;
          setBusy(true);
          setError(undefined);
          try {
            await onConfirm();
          } catch (err) {
            setError(err);
            setBusy(false);
          }
        }}
      >
        <div class="stack">
          <div class="alert alert-warn">{body}</div>
          <Field label={`Type ${expected} to confirm`}>
            <input
              class="input"
              value={typed}
              onInput={(e) => setTyped(e.currentTarget.value)}
              autocomplete="off"
              spellcheck={false}
              autofocus
            />
          </Field>
          <FormError error={error} />
          <div class="row-end">
            <Button onClick={onClose}>Cancel</Button>
            <Button type="submit" variant="danger" busy={busy} disabled={typed !== expected}>
              {action}
            </Button>
          </div>
        </div>
      </form>
    </Modal>
  );
}

export function Confirm({
  title,
  body,
  action,
  onConfirm,
  onClose,
}: {
  title: string;
  body: ComponentChildren;
  action: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <Modal title={title} onClose={onClose}>
      <div class="stack">
        <div>{body}</div>
        <FormError error={error} />
        <div class="row-end">
          <Button onClick={onClose}>Cancel</Button>
          <Button
            variant="danger"
            busy={busy}
            onClick={async () => {
              setBusy(true);
              try {
                await onConfirm();
              } catch (err) {
                setError(err);
                setBusy(false);
              }
            }}
          >
            {action}
          </Button>
        </div>
      </div>
    </Modal>
  );
}

// Toasts: short confirmations of what just happened, announced to screen readers.
interface Toast {
  id: number;
  text: string;
  tone: 'ok' | 'error';
}
const ToastCtx = createContext<(text: string, tone?: 'ok' | 'error') => void>(() => {});
export function ToastHost({ children }: { children: ComponentChildren }) {
  const [toasts, setToasts] = useState<Toast[]>([]);
  const push = useCallback((text: string, tone: 'ok' | 'error' = 'ok') => {
    const id = Math.random();
    setToasts((t) => [...t.slice(-1), { id, text, tone }]);
    setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), 3500);
  }, []);
  return (
    <ToastCtx.Provider value={push}>
      {children}
      <div class="toasts" aria-live="polite">
        {toasts.map((t) => (
          <div key={t.id} class={`toast toast-${t.tone}`}>
            {t.text}
          </div>
        ))}
      </div>
    </ToastCtx.Provider>
  );
}
export const useToast = () => useContext(ToastCtx);

export function PageHeader({
  title,
  subtitle,
  actions,
}: {
  title: ComponentChildren;
  subtitle?: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <div class="page-head">
      <div>
        <h1>{title}</h1>
        {subtitle && <p class="muted">{subtitle}</p>}
      </div>
      {actions && <div class="page-actions">{actions}</div>}
    </div>
  );
}
