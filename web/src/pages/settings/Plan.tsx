import { getBilling, getStats } from '../../api/workspace.js';
import { PlanRemedy } from '../../components/PlanRemedy.js';
import { useAsync } from '../../hooks.js';
import { useSession } from '../../session.js';
import { Async, ErrorBanner, Pill } from '../../ui.js';
import { SettingsCard } from './SettingsCard.js';

/** How much of one plan limit is used; a negative limit is unlimited. */
function Meter({ label, used, limit }: { label: string; used: number; limit: number }) {
  const pct = limit < 0 ? 0 : Math.min(100, Math.round((used / Math.max(limit, 1)) * 100));
  return (
    <div class="meter">
      <div class="meter-head">
        <span>{label}</span>
        <span class="muted small">
          {used} / {limit < 0 ? 'unlimited' : limit}
        </span>
      </div>
      <div
        class="meter-bar"
        role="progressbar"
        aria-label={label}
        aria-valuenow={pct}
        aria-valuemin={0}
        aria-valuemax={100}
      >
        <span class={pct >= 100 ? 'full' : pct >= 80 ? 'high' : ''} style={{ width: `${limit < 0 ? 4 : pct}%` }} />
      </div>
    </div>
  );
}

/**
 * D15/D69: the limits are lifted by an instance administrator on the Instance page; said here, beside the
 * meters, so the 4th project or member is not a dead end (the server's PLAN_LIMIT message says the same).
 */
function LiftLimits({ plan }: { plan: string }) {
  const { user } = useSession();
  return (
    <div class="note small" data-testid="lift-limits">
      <p>
        These are the {plan} plan's limits. <PlanRemedy plan={plan} />
      </p>
      {user.instanceAdmin && (
        <p>
          <code>DEFAULT_PLAN=team</code> (or <code>enterprise</code>) in the server's environment sets the plan of new
          workspaces.
        </p>
      )}
    </div>
  );
}

export function Plan() {
  const billing = useAsync(getBilling, []);
  const stats = useAsync(getStats, []);
  return (
    <SettingsCard title="Plan and usage" wide>
      <Async state={billing}>
        {(b) => (
          <div class="stack">
            <div>
              Plan <Pill tone="info">{b.plan}</Pill>
              <span class="muted small">
                {' '}
                · environments per project: {b.limits.envsPerProject < 0 ? 'unlimited' : b.limits.envsPerProject}
              </span>
            </div>
            <Meter label="Projects" used={b.usage.projects} limit={b.limits.projects} />
            <Meter label="Members (pending invites count)" used={b.usage.members} limit={b.limits.members} />
            {b.plan !== 'enterprise' && <LiftLimits plan={b.plan} />}
          </div>
        )}
      </Async>
      {stats.error ? (
        <ErrorBanner error={stats.error} />
      ) : stats.data ? (
        <dl class="stats">
          <div>
            <dt>Members</dt>
            <dd>{stats.data.memberCount}</dd>
          </div>
          <div>
            <dt>Projects</dt>
            <dd>{stats.data.projectCount}</dd>
          </div>
          <div>
            <dt>Variables</dt>
            <dd>{stats.data.variableCount}</dd>
          </div>
          <div>
            <dt>Active tokens</dt>
            <dd>{stats.data.tokenCount}</dd>
          </div>
        </dl>
      ) : null}
    </SettingsCard>
  );
}
