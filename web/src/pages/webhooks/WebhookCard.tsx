import type { Webhook } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { testWebhook, updateWebhook } from '../../api/webhooks.js';
import { relativeTime } from '../../lib/format.js';
import { useAction, useToast } from '../../toast.js';
import { Button, Pill } from '../../ui.js';
import { statusTone } from './status.js';

/** One webhook: where it posts, which events, its last delivery; an Owner's test, pause, edit and delete. */
export function WebhookCard({
  hook: h,
  projectName,
  owner,
  onChanged,
  onDeliveries,
  onEdit,
  onDelete,
}: {
  hook: Webhook;
  /** The project it is limited to, when it is and the caller sees that project. */
  projectName: string | null;
  owner: boolean;
  /** Reloads the list. */
  onChanged: () => Promise<void>;
  onDeliveries: () => void;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const toast = useToast();
  const act = useAction();
  return (
    <li class="card hook">
      <div class="hook-main">
        <div class="hook-title">
          <span class={`status-dot ${h.active ? 'on' : 'off'}`} aria-hidden="true" />
          <strong>{h.name}</strong>
          {!h.active && <Pill>paused</Pill>}
        </div>
        <code class="hook-url">{h.url}</code>
        <div class="muted small" data-testid="hook-project">
          {h.projectId ? `Only ${projectName ?? 'one project'}` : 'Every project'}
        </div>
        <div class="hook-events">
          {h.events.map((e) => (
            <span key={e} class="chip">
              {e}
            </span>
          ))}
        </div>
        <div class="muted small">
          Last delivery:{' '}
          {h.lastFiredAt ? (
            <>
              <Pill tone={statusTone(h.lastStatus)}>{h.lastStatus === 0 ? 'no response' : h.lastStatus}</Pill>{' '}
              {relativeTime(h.lastFiredAt)}
            </>
          ) : (
            'never'
          )}
        </div>
      </div>
      <div class="hook-actions">
        <Button size="sm" onClick={onDeliveries}>
          Deliveries
        </Button>
        {owner && (
          <>
            <Button
              size="sm"
              onClick={() =>
                act(async () => {
                  await testWebhook(h.id);
                  toast('Test ping queued');
                })
              }
            >
              Send test
            </Button>
            <ActiveSwitch hook={h} onChanged={onChanged} />
            <Button size="sm" variant="ghost" onClick={onEdit}>
              Edit
            </Button>
            <Button size="sm" variant="ghost" class="danger-text" onClick={onDelete}>
              Delete
            </Button>
          </>
        )}
      </div>
    </li>
  );
}

/** Pauses or resumes the webhook. */
function ActiveSwitch({ hook: h, onChanged }: { hook: Webhook; onChanged: () => Promise<void> }) {
  const act = useAction();
  // While saving, the state the user chose: shown at once and held until the list has reloaded, so a
  // re-render with the old list cannot flip the switch back under the user's finger.
  const [saving, setSaving] = useState<boolean | null>(null);
  return (
    <label class="switch">
      <input
        type="checkbox"
        checked={saving ?? h.active}
        disabled={saving !== null}
        aria-label={`${h.name} active`}
        onChange={async () => {
          const active = !h.active;
          setSaving(active);
          await act(async () => {
            await updateWebhook(h.id, { active });
            await onChanged();
          });
          setSaving(null);
        }}
      />
      <span>Active</span>
    </label>
  );
}
