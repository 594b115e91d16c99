import type { Project, Webhook, WebhookEvent } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { type CreatedWebhook, createWebhook, updateWebhook } from '../../api/webhooks.js';
import { ModalForm } from '../../components/ModalForm.js';
import { NameField, TextField } from '../../components/TextField.js';
import { useSubmit } from '../../hooks.js';
import { DEFAULT_WEBHOOK_EVENTS, WEBHOOK_EVENTS } from '../../lib/webhook-events.js';
import { Field } from '../../ui.js';

/**
 * A new webhook (`hook` null: its secret comes back once) or an existing one's name, URL, project and events.
 */
export function WebhookForm({
  hook,
  projects,
  onClose,
  onSaved,
}: {
  hook: Webhook | null;
  /** The projects it may be limited to; "every project" is always offered. */
  projects: Project[];
  onClose: () => void;
  onSaved: (created: CreatedWebhook | null) => Promise<void>;
}) {
  const [name, setName] = useState(hook?.name ?? '');
  const [url, setUrl] = useState(hook?.url ?? 'https://');
  // A new one starts with what the server gives a webhook created without events: every change (ADR 0004).
  const [events, setEvents] = useState<WebhookEvent[]>(hook?.events ?? [...DEFAULT_WEBHOOK_EVENTS]);
  const [projectId, setProjectId] = useState(hook?.projectId ?? '');
  const { busy, error, submit } = useSubmit();
  return (
    <ModalForm
      title={hook ? `Edit ${hook.name}` : 'New webhook'}
      onClose={onClose}
      onSubmit={submit(async () => {
        if (hook) {
          await updateWebhook(hook.id, { name, url, events, projectId: projectId || null });
          await onSaved(null);
        } else {
          await onSaved(await createWebhook({ name, url, events, projectId: projectId || null }));
        }
      })}
      busy={busy}
      error={error}
      fields={['name', 'url', 'projectId']}
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
      <Field label="Project" name="projectId" error={error} hint="Only this project's events are sent to it.">
        <select class="input" name="projectId" value={projectId} onChange={(e) => setProjectId(e.currentTarget.value)}>
          <option value="">Every project</option>
          {projects.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </Field>
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
