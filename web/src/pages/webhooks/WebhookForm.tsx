import type { Webhook, WebhookEvent } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { type CreatedWebhook, createWebhook, updateWebhook } from '../../api/webhooks.js';
import { ModalForm } from '../../components/ModalForm.js';
import { NameField, TextField } from '../../components/TextField.js';
import { useSubmit } from '../../hooks.js';
import { WEBHOOK_EVENTS } from '../../lib/webhook-events.js';

/** A new webhook (`hook` null: its secret comes back once) or an existing one's name, URL and events. */
export function WebhookForm({
  hook,
  onClose,
  onSaved,
}: {
  hook: Webhook | null;
  onClose: () => void;
  onSaved: (created: CreatedWebhook | null) => Promise<void>;
}) {
  const [name, setName] = useState(hook?.name ?? '');
  const [url, setUrl] = useState(hook?.url ?? 'https://');
  const [events, setEvents] = useState<WebhookEvent[]>(
    hook?.events ?? ['vars.bulk_upsert', 'var.update', 'var.delete'],
  );
  const { busy, error, submit } = useSubmit();
  return (
    <ModalForm
      title={hook ? `Edit ${hook.name}` : 'New webhook'}
      onClose={onClose}
      onSubmit={submit(async () => {
        if (hook) {
          await updateWebhook(hook.id, { name, url, events });
          await onSaved(null);
        } else {
          await onSaved(await createWebhook({ name, url, events }));
        }
      })}
      busy={busy}
      error={error}
      fields={['name', 'url']}
      submitLabel={hook ? 'Save' : 'Create webhook'}
      disabled={events.length === 0}
    >
      <NameField value={name} onValue={setName} error={error} required autofocus />
      <TextField
        label="URL"
        name="url"
        class="input mono"
        type="url"
        hint="https:// — the server refuses private addresses unless configured."
        value={url}
        onValue={setUrl}
        error={error}
        required
      />
      <fieldset class="fieldset">
        <legend>Events</legend>
        <div class="check-grid">
          {WEBHOOK_EVENTS.map((ev) => (
            <label key={ev} class="check">
              <input
                type="checkbox"
                checked={events.includes(ev)}
                onChange={() => setEvents(events.includes(ev) ? events.filter((x) => x !== ev) : [...events, ev])}
              />
              <code>{ev}</code>
            </label>
          ))}
        </div>
      </fieldset>
    </ModalForm>
  );
}
