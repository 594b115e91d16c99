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
            {!c.operator.connected && (
              <p class="small" data-testid="operator-howto">
                To connect one: install the External Secrets Operator, give it a read token for one project and
                environment, and point a <code>SecretStore</code> at this server with the header{' '}
                <code>X-Svcenv-Client: operator</code>. The steps and manifests are in <code>docs/kubernetes.md</code>{' '}
                (section "The External Secrets Operator").
              </p>
            )}
          </div>
        )}
      </Async>
    </SettingsCard>
  );
}
