import type { Identity } from '@svcenv/contract';
import { CopyButton, Modal } from '../../ui.js';
import { PRESETS, presetOf, snippet } from './presets.js';

/** D60: what to paste into the workflow, job or pod so that it signs in as this identity. */
export function SetupDialog({ identity, onClose }: { identity: Identity; onClose: () => void }) {
  const preset = presetOf(identity);
  const text = snippet(preset, location.origin, identity.id, identity.audience);
  const where = PRESETS.find((p) => p.id === preset)!;
  return (
    <Modal title={`Set up ${identity.name}`} onClose={onClose} wide>
      <div class="stack">
        <p class="muted small">
          {preset === 'custom' ? 'Exchange' : `In ${where.label}, exchange`} the platform’s JWT for a token that lives{' '}
          {identity.ttlSeconds} s; the CLI then uses <code>SVCENV_TOKEN</code>. Identity id:{' '}
          <code data-testid="identity-id">{identity.id}</code>
        </p>
        <pre class="code-block setup-snippet" data-testid="identity-snippet">
          {text}
        </pre>
        <div class="row-end">
          <CopyButton text={text} />
        </div>
      </div>
    </Modal>
  );
}
