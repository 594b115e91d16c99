import type { Environment } from '@svcenv/contract';
import { useRef } from 'preact/hooks';
import { Icon } from '../icons.js';
import { PROTECTED_HELP } from '../lib/access.js';

/**
 * Environment tabs in their colours, with the protected lock, and the add button. Keyboard as in the WAI-ARIA
 * tabs pattern: one tab stop (the selected tab; a roving tabindex), the arrow keys move to the previous or next
 * tab and select it, Home and End to the first and last. The add button is its own stop after the list.
 */
export function EnvTabs({
  envs,
  current,
  onSelect,
  onAdd,
  counts,
}: {
  envs: Environment[];
  current: string | null;
  onSelect: (e: string) => void;
  onAdd?: () => void;
  /** Open change requests per environment (D47): a badge on each tab that has some. */
  counts?: Record<string, number>;
}) {
  const list = useRef<HTMLDivElement>(null);
  const stop = envs.some((e) => e.name === current) ? current : (envs[0]?.name ?? null);
  const onKeyDown = (ev: KeyboardEvent) => {
    const at = envs.findIndex((e) => e.name === (ev.target as HTMLElement).dataset.env);
    if (at < 0 || envs.length === 0) return;
    const next =
      ev.key === 'ArrowRight' || ev.key === 'ArrowDown'
        ? (at + 1) % envs.length
        : ev.key === 'ArrowLeft' || ev.key === 'ArrowUp'
          ? (at - 1 + envs.length) % envs.length
          : ev.key === 'Home'
            ? 0
            : ev.key === 'End'
              ? envs.length - 1
              : null;
    if (next === null) return;
    ev.preventDefault();
    const name = envs[next]!.name;
    list.current?.querySelector<HTMLElement>(`[data-env="${CSS.escape(name)}"]`)?.focus();
    if (name !== current) onSelect(name);
  };
  return (
    <div class="env-tabs">
      <div class="env-tablist" role="tablist" aria-label="Environments" ref={list} onKeyDown={onKeyDown}>
        {envs.map((e) => (
          <button
            type="button"
            role="tab"
            key={e.name}
            data-env={e.name}
            aria-selected={current === e.name}
            tabIndex={stop === e.name ? 0 : -1}
            class="env-tab"
            style={{ borderColor: current === e.name ? e.color : 'transparent' }}
            onClick={() => onSelect(e.name)}
          >
            <span class="env-dot" style={{ background: e.color }} aria-hidden="true" />
            {e.name}
            {e.protected && (
              <span class="protected-badge" title={PROTECTED_HELP}>
                <Icon name="lock" size={10} />
                protected
              </span>
            )}
            {(counts?.[e.name] ?? 0) > 0 && (
              <span class="count-badge" data-testid={`open-count-${e.name}`} title="Open change requests">
                {counts?.[e.name]}
              </span>
            )}
          </button>
        ))}
      </div>
      {onAdd && (
        <button type="button" class="env-tab env-add" onClick={onAdd}>
          + Add environment
        </button>
      )}
    </div>
  );
}
