import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { authOptions } from './api/auth.js';

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

/**
 * Thrown when the person declined a confirmation the action asked for: nothing happened, so there is no
 * error to show (useSubmit and useAction let it pass silently) and the form keeps what was typed.
 */
export class Cancelled extends Error {
  constructor() {
    super('Cancelled');
    this.name = 'Cancelled';
  }
}

export interface Submit {
  /** True while an action runs: its button shows a spinner and cannot be pressed again. */
  busy: boolean;
  /** The last action's failure, for <Field>/<FormError>; cleared when the next one starts. */
  error: unknown;
  setError: (e: unknown) => void;
  /**
   * An event handler (a form's onSubmit, a button's onClick) that runs `action`: the page never reloads,
   * busy covers the action, and a failure lands in `error` instead of escaping.
   */
  submit: (action: () => Promise<unknown>) => (e?: Event) => Promise<void>;
}

/** The busy/error state of a form or a button whose failure is shown beside it. */
export function useSubmit(): Submit {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  // A successful action often closes its own dialog or leaves the page: nothing to update then.
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  const submit = (action: () => Promise<unknown>) => async (e?: Event) => {
    e?.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (err) {
      if (mounted.current && !(err instanceof Cancelled)) setError(err);
    }
    if (mounted.current) setBusy(false);
  };
  return { busy, error, setError, submit };
}

/**
 * Whether the server sends email (ADR 0021): undefined until known, and when it cannot be asked (a server
 * without the operation), so that pages keep their usual words rather than guess.
 */
export function useEmailDelivery(): boolean | undefined {
  const [delivery, setDelivery] = useState<boolean | undefined>(undefined);
  useEffect(() => {
    let live = true;
    authOptions()
      .then((o) => live && setDelivery(o.emailDelivery))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);
  return delivery;
}
