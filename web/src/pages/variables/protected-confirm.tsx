import type { Environment } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { Cancelled } from '../../hooks.js';
import { PROTECTED_HELP } from '../../lib/access.js';
import { Button, Modal } from '../../ui.js';

interface Asking {
  what: string;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * A protected environment (prod, by default) is written only after the person confirms it: an Owner or Admin
 * editing prod by mistake instead of dev is the slip protection exists for, and the server lets them. `guard`
 * resolves once confirmed and throws Cancelled otherwise (the form keeps what was typed); on an environment
 * that is not protected it resolves at once. `dialog` is rendered by the caller.
 */
export function useProtectedConfirm(env: Environment) {
  const [asking, setAsking] = useState<Asking | null>(null);
  const guard = (what: string): Promise<void> =>
    env.protected ? new Promise((resolve, reject) => setAsking({ what, resolve, reject })) : Promise.resolve();
  const close = (confirmed: boolean) => {
    if (!asking) return;
    setAsking(null);
    if (confirmed) asking.resolve();
    else asking.reject(new Cancelled());
  };
  const dialog = asking && (
    <Modal title={`Change protected ${env.name}?`} onClose={() => close(false)}>
      <div class="stack" data-testid="protected-confirm">
        <p>
          {asking.what} in <strong>{env.name}</strong>, a protected environment. Services pulling {env.name} get the
          change on their next pull.
        </p>
        <p class="muted small">{PROTECTED_HELP}</p>
        <div class="row-end">
          <Button onClick={() => close(false)}>Cancel</Button>
          <Button variant="primary" autofocus onClick={() => close(true)}>
            Save to {env.name}
          </Button>
        </div>
      </div>
    </Modal>
  );
  return { guard, dialog };
}
