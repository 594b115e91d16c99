import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, errorMessage } from './api.js';
import { useSubmit } from './hooks.js';
import { codeTitle } from './lib/error-words.js';
import { linkHandler } from './router.js';

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

/**
 * Whether trying the same request again could succeed: a network failure, a server error, a timeout or a
 * rate limit may pass later; any other refusal (403 forbidden, 404, 400, 409, a plan limit) answers the same
 * way every time, so a "Retry" button would only repeat it.
 */
export function retryable(error: unknown): boolean {
  if (!(error instanceof ApiError)) return true;
  // Status 0: the server could not be reached (api.ts).
  return error.status === 0 || error.status >= 500 || error.status === 408 || error.status === 429;
}

export function ErrorBanner({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  if (!error) return null;
  const code = error instanceof ApiError ? error.code : undefined;
  return (
    <div class="alert alert-error" role="alert">
      <div>
        {/* The code stays for support and scripts (data-code), the person reads words. */}
        {code && (
          <strong class="alert-title" data-code={code}>
            {codeTitle(code)}:
          </strong>
        )}
        <span>{errorMessage(error)}</span>
      </div>
      {onRetry && retryable(error) && (
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

const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), ' +
  'textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/** The elements Tab reaches inside `root`, in order (visible ones only). */
function tabStops(root: HTMLElement): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(FOCUSABLE)].filter(
    (el) => el.tabIndex >= 0 && (el.offsetWidth > 0 || el.offsetHeight > 0 || el.getClientRects().length > 0),
  );
}

/**
 * A modal on the native <dialog>. Focus stays inside while it is open: Tab from the last control goes to the
 * first and Shift+Tab from the first to the last (the browser alone would leave for its own toolbar). Escape
 * or closing returns focus to the control that had it when the dialog opened, when that control is still
 * on the page.
 */
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
  // Read on the first render, before showModal moves focus into the dialog.
  const [opener] = useState(() => (document.activeElement instanceof HTMLElement ? document.activeElement : null));
  // A layout effect: Preact runs a passive effect's cleanup a frame after the dialog has left the page, so
  // focus came back to the opener after the user (or a test) had already moved on to another field.
  useLayoutEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => {
      const at = document.activeElement;
      const inside = !at || at === document.body || (d?.contains(at) ?? false);
      if (d?.open) d.close();
      if (inside && opener?.isConnected && opener !== document.body) opener.focus();
    };
  }, []);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'Tab' || !ref.current) return;
    const stops = tabStops(ref.current);
    if (stops.length === 0) {
      e.preventDefault();
      return;
    }
    const first = stops[0]!;
    const last = stops[stops.length - 1]!;
    const at = document.activeElement;
    if (e.shiftKey && (at === first || at === ref.current || !ref.current.contains(at))) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && (at === last || !ref.current.contains(at))) {
      e.preventDefault();
      first.focus();
    }
  };
  return (
    <dialog
      ref={ref}
      class={`modal ${wide ? 'modal-wide' : ''}`}
      aria-label={title}
      onKeyDown={onKeyDown}
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
  const { busy, error, submit } = useSubmit();
  return (
    <Modal title={title} onClose={onClose}>
      <form
        onSubmit={(e) => {
          if (typed === expected) return submit(onConfirm)(e);
          e.preventDefault();
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
  const { busy, error, submit } = useSubmit();
  return (
    <Modal title={title} onClose={onClose}>
      <div class="stack">
        <div>{body}</div>
        <FormError error={error} />
        <div class="row-end">
          <Button onClick={onClose}>Cancel</Button>
          <Button variant="danger" busy={busy} onClick={submit(onConfirm)}>
            {action}
          </Button>
        </div>
      </div>
    </Modal>
  );
}

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
