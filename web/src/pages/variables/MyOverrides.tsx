import type { Environment, Project } from '@svcenv/contract';
import type { Override } from '../../api/variables.js';
import { relativeTime } from '../../lib/format.js';
import { Button, ErrorBanner, Pill } from '../../ui.js';
import { RequestAccessPanel } from '../access/RequestAccess.js';
import type { PersonalValues } from './usePersonalValues.js';

/** Orphaned: the environment no longer has the key. The listing in hand says it best; else the server's flag. */
const orphanedIn = (o: Override, keys: ReadonlySet<string> | null) => (keys ? !keys.has(o.key) : o.orphaned);

/**
 * D75 (ADR 0031): "My overrides" under an environment's variables, for the person who may set them: each of
 * their own values, applied or not (a key deleted since: "not applied", with Remove). Quiet otherwise: nothing
 * in a protected environment unless values set before it was protected are left (one line says they are not
 * applied); for a reader, one line and the request for write (D74).
 */
export function MyOverrides({
  env,
  personal,
  keys,
}: {
  env: Environment;
  personal: PersonalValues;
  /** The environment's keys, once listed. */
  keys: ReadonlySet<string> | null;
}) {
  const { overrides, error, available, removable } = personal;
  if (error) return available ? <ErrorBanner error={error} onRetry={personal.reload} /> : null;
  const list = overrides ?? [];
  if (!available) {
    if (list.length === 0) return null;
    // Left from before: in a protected environment they are never applied; a reader's still are.
    return (
      <section class="my-overrides my-overrides-quiet" aria-label="My overrides" data-testid="my-overrides">
        <p class="note" data-testid="overrides-unavailable">
          {env.protected
            ? `Personal values are not available in protected environments: your ${valuesOf(list)} in ${env.name} ${list.length === 1 ? 'is' : 'are'} not applied.`
            : `Your own ${list.length === 1 ? 'value' : 'values'} in ${env.name}, set while you had write: only you see ${list.length === 1 ? 'it' : 'them'}.`}
        </p>
        <OverrideList
          list={list}
          keys={keys}
          applied={!env.protected}
          {...(removable ? { onRemove: personal.remove } : {})}
        />
      </section>
    );
  }
  if (list.length === 0) {
    return keys && keys.size > 0 ? (
      <p class="note my-overrides-hint" data-testid="my-overrides-hint">
        Need a different value of a key for yourself, such as a local database? “Set my value” on its row: only you get
        it, the team's value is unchanged.
      </p>
    ) : null;
  }
  return (
    <section class="my-overrides" aria-label="My overrides" data-testid="my-overrides">
      <h3 class="my-overrides-title">My overrides in {env.name}</h3>
      <p class="muted small">
        Your own values: you get them here, in your pulls and in <code>svcenv run</code> with tokens you created. Nobody
        else sees them, and the team's values are unchanged.
      </p>
      <OverrideList list={list} keys={keys} applied onEdit={(key) => personal.open(key)} onRemove={personal.remove} />
    </section>
  );
}

/** "value of A", "values of A and B", "4 values" (names while they are few). */
function valuesOf(list: Override[]) {
  const keys = list.map((o) => o.key);
  if (keys.length === 1) return `value of ${keys[0]}`;
  if (keys.length <= 3) return `values of ${keys.slice(0, -1).join(', ')} and ${keys.at(-1)}`;
  return `${keys.length} values`;
}

function OverrideList({
  list,
  keys,
  applied,
  onEdit,
  onRemove,
}: {
  list: Override[];
  keys: ReadonlySet<string> | null;
  /** Whether the environment applies them at all (not when it is protected). */
  applied: boolean;
  onEdit?: (key: string) => void;
  onRemove?: (key: string, orphaned: boolean) => void;
}) {
  return (
    <ul class="my-overrides-list">
      {list.map((o) => {
        const orphaned = orphanedIn(o, keys);
        return (
          <li key={o.key} data-testid={`my-override-${o.key}`} class={orphaned ? 'orphaned' : ''}>
            <code class="var-key">{o.key}</code>
            {orphaned ? (
              <Pill tone="warn">not applied — the key was deleted</Pill>
            ) : applied ? (
              <Pill tone="info">applied</Pill>
            ) : (
              <Pill tone="neutral">not applied</Pill>
            )}
            <span class="muted small" title={new Date(o.updatedAt).toLocaleString()}>
              set {relativeTime(o.updatedAt)}
            </span>
            <span class="my-overrides-actions">
              {onEdit && !orphaned && applied && (
                <Button
                  size="sm"
                  variant="ghost"
                  onClick={() => onEdit(o.key)}
                  aria-label={`Edit my value of ${o.key}`}
                >
                  Edit
                </Button>
              )}
              {onRemove && (
                <Button
                  size="sm"
                  variant="ghost"
                  class="danger-text"
                  onClick={() => onRemove(o.key, orphaned)}
                  aria-label={`Remove my value of ${o.key}`}
                >
                  Remove
                </Button>
              )}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

/**
 * D74 for a reader of an unprotected environment: personal values need write, so one line says so with the
 * request form the access pages own (a request for write, since the person reads already).
 */
export function MyValuesNeedWrite({ project, env }: { project: Project; env: Environment }) {
  return (
    <div class="my-values-need-write" data-testid="overrides-need-write">
      <p class="note">
        Setting your own value of a key (only you see it; the team's value stays) needs write access to {env.name}.
      </p>
      <RequestAccessPanel project={project} envs={[env.name]} />
    </div>
  );
}
