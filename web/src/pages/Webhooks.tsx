import type { Webhook, WebhookDelivery, WebhookEvent } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import {
  type CreatedWebhook,
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  testWebhook,
  updateWebhook,
} from '../api/webhooks.js';
import { ApiError } from '../api.js';
import { ModalForm } from '../components/ModalForm.js';
import { useAsync, useSubmit } from '../hooks.js';
import { dateTime, relativeTime } from '../lib/format.js';
import { WEBHOOK_EVENTS } from '../lib/webhook-events.js';
import { isOwner, useSession } from '../session.js';
import { useAction, useToast } from '../toast.js';
import {
  Async,
  Button,
  Confirm,
  Empty,
  ErrorBanner,
  Field,
  Modal,
  OnceSecret,
  PageHeader,
  Pill,
  Spinner,
} from '../ui.js';

function statusTone(s: number | null): string {
  if (s === null) return 'neutral';
  return s >= 200 && s < 300 ? 'ok' : 'bad';
}

export function WebhooksPage() {
  const { user } = useSession();
  const owner = isOwner(user);
  const toast = useToast();
  const act = useAction();
  const hooks = useAsync(listWebhooks, []);
  const [editing, setEditing] = useState<Webhook | 'new' | null>(null);
  const [secret, setSecret] = useState<CreatedWebhook | null>(null);
  // Active switches being saved, with the state the user chose: shown at once and held until the list
  // has reloaded, so a re-render with the old list cannot flip the switch back under the user's finger.
  const [saving, setSaving] = useState<Record<string, boolean>>({});
  const [deliveries, setDeliveries] = useState<Webhook | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  if (hooks.error instanceof ApiError && hooks.error.status === 404) {
    return (
      <>
        <PageHeader title="Webhooks" />
        <Empty title="Webhooks are not available on this server">Update the server to a version with webhooks.</Empty>
      </>
    );
  }
  return (
    <>
      <PageHeader
        title="Webhooks"
        subtitle="Signed HTTP POSTs (X-Svcenv-Signature: sha256=…) when variables change or are pulled."
        actions={
          owner && (
            <Button variant="primary" onClick={() => setEditing('new')}>
              New webhook
            </Button>
          )
        }
      />
      <Async state={hooks}>
        {({ webhooks }) =>
          webhooks.length === 0 ? (
            <Empty
              title="No webhooks"
              action={owner && <Button onClick={() => setEditing('new')}>Create a webhook</Button>}
            >
              Notify your deploy pipeline or chat when configuration changes.
            </Empty>
          ) : (
            <ul class="hook-list">
              {webhooks.map((h) => (
                <li key={h.id} class="card hook">
                  <div class="hook-main">
                    <div class="hook-title">
                      <span class={`status-dot ${h.active ? 'on' : 'off'}`} aria-hidden="true" />
                      <strong>{h.name}</strong>
                      {!h.active && <Pill>paused</Pill>}
                    </div>
                    <code class="hook-url">{h.url}</code>
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
                          <Pill tone={statusTone(h.lastStatus)}>
                            {h.lastStatus === 0 ? 'no response' : h.lastStatus}
                          </Pill>{' '}
                          {relativeTime(h.lastFiredAt)}
                        </>
                      ) : (
                        'never'
                      )}
                    </div>
                  </div>
                  <div class="hook-actions">
                    <Button size="sm" onClick={() => setDeliveries(h)}>
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
                        <label class="switch">
                          <input
                            type="checkbox"
                            checked={saving[h.id] ?? h.active}
                            disabled={h.id in saving}
                            aria-label={`${h.name} active`}
                            onChange={async () => {
                              const active = !h.active;
                              setSaving((now) => ({ ...now, [h.id]: active }));
                              await act(async () => {
                                await updateWebhook(h.id, { active });
                                await hooks.reload();
                              });
                              setSaving(({ [h.id]: _, ...rest }) => rest);
                            }}
                          />
                          <span>Active</span>
                        </label>
                        <Button size="sm" variant="ghost" onClick={() => setEditing(h)}>
                          Edit
                        </Button>
                        <Button size="sm" variant="ghost" class="danger-text" onClick={() => setDeleting(h)}>
                          Delete
                        </Button>
                      </>
                    )}
                  </div>
                </li>
              ))}
            </ul>
          )
        }
      </Async>
      {editing && (
        <WebhookForm
          hook={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={async (created) => {
            setEditing(null);
            if (created) setSecret(created);
            else toast('Webhook saved');
            await hooks.reload();
          }}
        />
      )}
      {secret && (
        <Modal
          title={`Webhook ${secret.name} created`}
          onClose={() => setSecret(null)}
          footer={
            <Button variant="primary" onClick={() => setSecret(null)}>
              I have saved it
            </Button>
          }
        >
          <OnceSecret
            value={secret.secret}
            note="This signing secret is shown only once. Use it to verify X-Svcenv-Signature."
          />
        </Modal>
      )}
      {deliveries && <Deliveries hook={deliveries} onClose={() => setDeliveries(null)} />}
      {deleting && (
        <Confirm
          title={`Delete ${deleting.name}?`}
          action="Delete"
          body={<p>No more deliveries will be sent to {deleting.url}.</p>}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await deleteWebhook(deleting.id);
            setDeleting(null);
            await hooks.reload();
          }}
        />
      )}
    </>
  );
}

function WebhookForm({
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
      <Field label="Name" name="name" error={error}>
        <input
          class="input"
          name="name"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
          required
          autofocus
        />
      </Field>
      <Field
        label="URL"
        name="url"
        error={error}
        hint="https:// — the server refuses private addresses unless configured."
      >
        <input
          class="input mono"
          name="url"
          type="url"
          value={url}
          onInput={(e) => setUrl(e.currentTarget.value)}
          required
        />
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

function Deliveries({ hook, onClose }: { hook: Webhook; onClose: () => void }) {
  const [list, setList] = useState<WebhookDelivery[] | null>(null);
  const [error, setError] = useState<unknown>();
  const load = () =>
    listDeliveries(hook.id)
      .then((r) => setList(r.deliveries))
      .catch(setError);
  useEffect(() => {
    void load();
  }, [hook.id]);
  return (
    <Modal title={`Deliveries of ${hook.name}`} onClose={onClose} wide footer={<Button onClick={load}>Refresh</Button>}>
      {error ? (
        <ErrorBanner error={error} />
      ) : !list ? (
        <Spinner />
      ) : list.length === 0 ? (
        <Empty title="No deliveries yet">Send a test ping or change a variable.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="table" data-testid="deliveries">
            <thead>
              <tr>
                <th>Event</th>
                <th>Status</th>
                <th>Attempt</th>
                <th>Duration</th>
                <th>Time</th>
              </tr>
            </thead>
            <tbody>
              {list.map((d) => (
                <tr key={`${d.id}-${d.attempt}`}>
                  <td>
                    <code>{d.event}</code>
                  </td>
                  <td>
                    <Pill tone={statusTone(d.status)}>{d.status === 0 ? (d.error ?? 'no response') : d.status}</Pill>
                  </td>
                  <td>{d.attempt}</td>
                  <td>{d.durationMs} ms</td>
                  <td class="small" title={dateTime(d.createdAt)}>
                    {relativeTime(d.createdAt)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Modal>
  );
}
