import { getConnections } from '../../api/workspace.js';
import { useAsync } from '../../hooks.js';
import { relativeTime } from '../../lib/format.js';
import { Async } from '../../ui.js';
import { SettingsCard } from './SettingsCard.js';

/** Whether the Kubernetes operator pulled lately. */
export function Operator() {
  const conn = useAsync(getConnections, []);
  return (
    <SettingsCard title="Kubernetes operator">
      <Async state={conn}>
        {(c) => (
          <div class="stack">
            <div>
              <span class={`status-dot ${c.operator.connected ? 'on' : 'off'}`} aria-hidden="true" />{' '}
              {c.operator.connected ? 'Connected' : 'Not connected'}
            </div>
            <p class="muted small">
              Last sync: {c.operator.lastSync ? relativeTime(c.operator.lastSync) : 'never'}. The operator counts as
              connected when it pulled in the last 10 minutes (with <code>X-Svcenv-Client: operator</code>).
            </p>
          </div>
        )}
      </Async>
    </SettingsCard>
  );
}
