import type { Webhook } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { listProjects } from '../../api/projects.js';
import { type CreatedWebhook, deleteWebhook, listWebhooks } from '../../api/webhooks.js';
import { ApiError } from '../../api.js';
import { OnceSecretDialog } from '../../components/OnceSecretDialog.js';
import { useAsync } from '../../hooks.js';
import { isOwner, useSession } from '../../session.js';
import { useToast } from '../../toast.js';
import { Async, Button, Confirm, Empty, PageHeader } from '../../ui.js';
import { AuditStreamsSection } from './AuditStreams.js';
import { DeliveriesDialog } from './DeliveriesDialog.js';
import { WebhookCard } from './WebhookCard.js';
import { WebhookForm } from './WebhookForm.js';

export function WebhooksPage() {
  const { user } = useSession();
  const owner = isOwner(user);
  const toast = useToast();
  const hooks = useAsync(listWebhooks, []);
  // Names of the projects a webhook may be limited to; a failure leaves the ids unnamed, nothing worse.
  const projects = useAsync(() => listProjects().catch(() => ({ projects: [] })), []);
  const projectList = projects.data?.projects ?? [];
  const [editing, setEditing] = useState<Webhook | 'new' | null>(null);
  const [secret, setSecret] = useState<CreatedWebhook | null>(null);
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
                <WebhookCard
                  key={h.id}
                  hook={h}
                  projectName={h.projectId ? (projectList.find((p) => p.id === h.projectId)?.name ?? null) : null}
                  owner={owner}
                  onChanged={hooks.reload}
                  onDeliveries={() => setDeliveries(h)}
                  onEdit={() => setEditing(h)}
                  onDelete={() => setDeleting(h)}
                />
              ))}
            </ul>
          )
        }
      </Async>
      {owner && <AuditStreamsSection />}
      {editing && (
        <WebhookForm
          hook={editing === 'new' ? null : editing}
          projects={projectList}
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
        <OnceSecretDialog
          title={`Webhook ${secret.name} created`}
          value={secret.secret}
          note="This signing secret is shown only once. Use it to verify X-Svcenv-Signature."
          onClose={() => setSecret(null)}
        />
      )}
      {deliveries && <DeliveriesDialog hook={deliveries} onClose={() => setDeliveries(null)} />}
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
