import type { Variable } from '@svcenv/contract';
import { RefTargets } from '../../components/RefField.js';
import { Icon } from '../../icons.js';
import { expiresIn, relativeTime } from '../../lib/format.js';
import { displayValue, isMasked } from '../../lib/mask.js';
import { missingReferences } from '../../lib/references.js';
import { Button } from '../../ui.js';

type VarType = Variable['type'];

export interface VarRowActions {
  onSelect: () => void;
  onReveal: () => void;
  /** Copies the value; a masked secret asks to be revealed first. */
  onCopy: () => void;
  onToggleType: () => void;
  onEdit: () => void;
  onHistory: () => void;
  onDelete: () => void;
}

/** D75: the viewer's own value of the key, offered where they may set one (write, unprotected environment). */
export interface MyValueActions {
  /** Opens the row's editor of the viewer's own value ("Set my value", or "Edit my value" when overridden). */
  onOpen: () => void;
  /** Back to the team's value. */
  onRemove: () => void;
}

/** One variable: its key and expiry, its value (masked, revealed, resolved), its type and actions. */
export function VarRow({
  v,
  shown,
  selected,
  revealed,
  revealAll,
  revealForbidden,
  canWrite,
  keys,
  actions,
  mine,
}: {
  v: Variable;
  /** The row's value source: the plaintext entry when revealed. */
  shown: Variable;
  selected: boolean;
  revealed: boolean;
  revealAll: boolean;
  revealForbidden: boolean;
  /** Write on the environment; without it the row offers its history only. */
  canWrite: boolean;
  /** Every key of the environment, to tell a reference to a missing key (it resolves to empty, D25). */
  keys: ReadonlySet<string>;
  actions: VarRowActions;
  mine?: MyValueActions | undefined;
}) {
  const masked = isMasked(shown.value);
  // A masked secret can be copied only by revealing it, which needs write (ADR 0006); an unreadable one not at all.
  const copyable = !v.valueError && (!masked || (canWrite && !revealForbidden));
  const problem = v.valueError || v.resolveError;
  return (
    <tr class={`${selected ? 'selected' : ''} ${problem ? 'row-problem' : ''}`}>
      <td class="col-check">
        {canWrite && (
          <input type="checkbox" aria-label={`Select ${v.key}`} checked={selected} onChange={actions.onSelect} />
        )}
      </td>
      <td class="key-cell">
        <code class="var-key">{v.key}</code>
        {v.expiresAt && <ExpiryMarker at={v.expiresAt} />}
        {v.overridden && (
          // D75: the value shown is the viewer's own override; nobody else sees it.
          <span
            class="pill pill-info mine-pill"
            title="Your personal value: only you see it; the team's value is unchanged"
            data-testid={`overridden-${v.key}`}
          >
            my value
          </span>
        )}
      </td>
      <td class="value-cell">
        <div class="value-line">
          <code class={`var-value ${masked ? 'masked' : ''}`} data-testid={`value-${v.key}`}>
            {v.valueError ? (
              <span class="muted">(unreadable)</span>
            ) : (
              displayValue(shown.value) || <span class="muted">(empty)</span>
            )}
          </code>
          {copyable && (
            <button
              type="button"
              class="icon-btn"
              aria-label={`Copy ${v.key}`}
              title={masked ? 'Copy (reveals the value first)' : 'Copy value'}
              onClick={actions.onCopy}
            >
              <Icon name="copy" />
            </button>
          )}
          {canWrite && v.type === 'secret' && !revealAll && (
            <button
              type="button"
              class="icon-btn"
              aria-label={`${revealed ? 'Hide' : 'Reveal'} ${v.key}`}
              title={revealed ? 'Hide' : 'Reveal'}
              disabled={revealForbidden}
              onClick={actions.onReveal}
            >
              <Icon name={revealed ? 'eyeOff' : 'eye'} />
            </button>
          )}
        </div>
        <Resolved v={shown} />
        <MissingRefs v={v} shown={shown} keys={keys} />
        {!v.valueError && !masked && <RefTargets value={shown.value} testId={`targets-${v.key}`} />}
        {v.overridden && mine && (
          <div class="my-value-line" data-testid={`mine-${v.key}`}>
            <span>Only you see this value.</span>{' '}
            <span class="my-value-links">
              <button type="button" class="linklike" onClick={mine.onOpen} aria-label={`Edit my value of ${v.key}`}>
                Edit my value
              </button>
              <button
                type="button"
                class="linklike danger-text"
                onClick={mine.onRemove}
                aria-label={`Remove my value of ${v.key}`}
              >
                Remove my value
              </button>
            </span>
          </div>
        )}
      </td>
      <td class="col-type">
        {canWrite ? (
          <TypeToggle type={v.type} onToggle={actions.onToggleType} />
        ) : (
          <span class={`type-toggle type-${v.type} type-static`}>{v.type}</span>
        )}
      </td>
      <td class="col-meta muted small">{relativeTime(v.updatedAt)}</td>
      <td class="col-actions">
        <div class="row-actions">
          {canWrite && (
            <Button size="sm" variant="ghost" onClick={actions.onEdit} aria-label={`Edit ${v.key}`}>
              Edit
            </Button>
          )}
          {mine && !v.overridden && (
            <Button
              size="sm"
              variant="ghost"
              onClick={mine.onOpen}
              aria-label={`Set my value of ${v.key}`}
              title="Your own value of this key: only you see it, the team's value is unchanged"
            >
              Set my value
            </Button>
          )}
          <Button size="sm" variant="ghost" onClick={actions.onHistory} aria-label={`History of ${v.key}`}>
            History
          </Button>
          {canWrite && (
            <Button
              size="sm"
              variant="ghost"
              class="danger-text"
              onClick={actions.onDelete}
              aria-label={`Delete ${v.key}`}
            >
              Delete
            </Button>
          )}
        </div>
      </td>
    </tr>
  );
}

/**
 * What a value with `${KEY}` references resolves to, or why it cannot (D25, D26, D49): a cycle, a limit, a
 * forbidden reference, or a stored value that cannot be decrypted are marked, never left blank.
 */
function Resolved({ v }: { v: Variable }) {
  if (v.valueError) {
    return (
      <div class="resolved resolved-error" role="note" data-testid={`problem-${v.key}`}>
        ⚠ This value cannot be decrypted ({v.valueError}): pulls and exports fail on it. Restore a version from its
        History or set a new value.
      </div>
    );
  }
  if (v.resolveError) {
    return (
      <div class="resolved resolved-error" role="note" data-testid={`problem-${v.key}`}>
        ⚠ Cannot resolve: {v.resolveError}. Pulls of this environment fail until it is fixed.
      </div>
    );
  }
  if (v.resolvedValue === undefined) return null;
  return (
    <div class="resolved" data-testid={`resolved-${v.key}`}>
      → <code>{displayValue(v.resolvedValue)}</code>
    </div>
  );
}

/**
 * `${KEY}` naming no variable of this environment resolves to the empty string (D25) without any error, so
 * a typo would pull as empty: say so. Only values that are visible (plain, or revealed) can be read for it.
 */
function MissingRefs({ v, shown, keys }: { v: Variable; shown: Variable; keys: ReadonlySet<string> }) {
  if (v.valueError || isMasked(shown.value)) return null;
  const missing = missingReferences(shown.value, keys);
  if (missing.length === 0) return null;
  return (
    <div class="resolved ref-missing" role="note" data-testid={`missing-${v.key}`}>
      {missing.map((r) => (
        <div key={r.key}>
          ⚠ <code>{r.key}</code> is not defined in this environment;{' '}
          {r.withFallback ? 'its fallback is used' : 'resolves to empty'}
        </div>
      ))}
    </div>
  );
}

function ExpiryMarker({ at }: { at: string }) {
  const { label, tone } = expiresIn(at);
  return (
    <span class={`expiry expiry-${tone}`} title={new Date(at).toLocaleString()}>
      {label}
    </span>
  );
}

function TypeToggle({ type, onToggle }: { type: VarType; onToggle: () => void }) {
  return (
    <button
      type="button"
      class={`type-toggle type-${type}`}
      onClick={onToggle}
      title={`Make it ${type === 'secret' ? 'plain' : 'secret'}`}
      aria-label={`Type ${type}; switch to ${type === 'secret' ? 'plain' : 'secret'}`}
    >
      {type}
    </button>
  );
}
