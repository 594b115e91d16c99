import type { AuditStream } from '@svcenv/contract';
import { useEffect, useState } from 'preact/hooks';
import {
  type CreatedAuditStream,
  createAuditStream,
  deleteAuditStream,
  listAuditStreams,
} from '../../api/audit-streams.js';
import { ApiError } from '../../api.js';
import { ModalForm } from '../../components/ModalForm.js';
import { OnceSecretDialog } from '../../components/OnceSecretDialog.js';
import { TextField } from '../../components/TextField.js';
import { useAsync, useSubmit } from '../../hooks.js';
import { relativeTime } from '../../lib/format.js';
import { Async, Button, Confirm, Pill } from '../../ui.js';
import { statusTone } from './status.js';

/** How often the lag and last status are read again while the section is open. */
const REFRESH_MS = 5_000;

/**
 * D65: the Owner's audit streams, under the webhooks: add one (its secret shown once), see each one's lag
 * (entries not yet acknowledged) and last attempt, delete. Members do not see the section (the list is
 * Owner-only).
 */
export function AuditStreamsSection() {
  const streams = useAsync(listAuditStreams, []);
  const [adding, setAdding] = useState(false);
  const [created, setCreated] = useState<CreatedAuditStream | null>(null);
  const [deleting, setDeleting] = useState<AuditStream | null>(null);
  useEffect(() => {
    const timer = setInterval(() => void streams.reload(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [streams.reload]);
  // A server from before audit streams: no section rather than an error.
  if (streams.error instanceof ApiError && streams.error.status === 404) return null;
  return (
    <section aria-labelledby="audit-streams-title">
      <div class="section-head">
        <div>
          <h2 id="audit-streams-title" class="section-title">
            Audit streams
          </h2>
          <p class="muted small">
            Every audit entry, in order, POSTed in signed batches to your log system (Splunk, Datadog, Elasticsearch
            through a collector). Retried until acknowledged.
          </p>
        </div>
        <Button onClick={() => setAdding(true)}>Add stream</Button>
      </div>
      <Async state={streams}>
        {({ streams: list }) =>
          list.length === 0 ? (
            <p class="muted">No audit streams.</p>
          ) : (
            <ul class="hook-list">
              {list.map((s) => (
                <StreamCard key={s.id} stream={s} onDelete={() => setDeleting(s)} />
              ))}
            </ul>
          )
        }
      </Async>
      {adding && (
        <AddStreamForm
          onClose={() => setAdding(false)}
          onCreated={async (s) => {
            setAdding(false);
            setCreated(s);
            await streams.reload();
          }}
        />
      )}
      {created && (
        <OnceSecretDialog
          title="Audit stream added"
          value={created.secret}
          note="This signing secret is shown only once. Your receiver checks X-Svcenv-Signature with it."
          onClose={() => setCreated(null)}
        />
      )}
      {deleting && (
        <Confirm
          title="Delete this audit stream?"
          action="Delete"
          body={<p>No more audit entries will be sent to {deleting.url}.</p>}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await deleteAuditStream(deleting.id);
            setDeleting(null);
            await streams.reload();
          }}
        />
      )}
    </section>
  );
}

function StreamCard({ stream: s, onDelete }: { stream: AuditStream; onDelete: () => void }) {
  const behind = s.pending === 1 ? '1 entry behind' : `${s.pending.toLocaleString()} entries behind`;
  return (
    <li class="card hook">
      <div class="hook-main">
        <code class="hook-url">{s.url}</code>
        <div class="hook-events">
          <Pill
            tone={s.pending === 0 ? 'ok' : s.lastStatus !== null && statusTone(s.lastStatus) === 'bad' ? 'bad' : 'warn'}
          >
            {s.pending === 0 ? 'up to date' : behind}
          </Pill>
        </div>
        <div class="muted small">
          Last attempt:{' '}
          {s.lastStatus === null ? (
            'none yet'
          ) : (
            <Pill tone={statusTone(s.lastStatus)}>{s.lastStatus === 0 ? 'no response' : s.lastStatus}</Pill>
          )}
          {' · '}Last delivered:{' '}
          {s.lastDeliveredAt ? `${relativeTime(s.lastDeliveredAt)} (entry ${s.lastDeliveredId})` : 'never'}
        </div>
      </div>
      <div class="hook-actions">
        <Button
          size="sm"
          variant="ghost"
          class="danger-text"
          onClick={onDelete}
          aria-label={`Delete audit stream ${s.url}`}
        >
          Delete
        </Button>
      </div>
    </li>
  );
}

function AddStreamForm({
  onClose,
  onCreated,
}: {
  onClose: () => void;
  onCreated: (s: CreatedAuditStream) => Promise<void>;
}) {
  const [url, setUrl] = useState('https://');
  const { busy, error, submit } = useSubmit();
  return (
    <ModalForm
      title="Add an audit stream"
      onClose={onClose}
      onSubmit={submit(async () => onCreated(await createAuditStream(url)))}
      busy={busy}
      error={error}
      fields={['url']}
      submitLabel="Add stream"
    >
      <TextField
        label="URL"
        name="url"
        class="input mono"
        type="url"
        hint="Your collector's HTTPS endpoint, e.g. Vector's http_server source. Entries from now on are sent."
        value={url}
        onValue={setUrl}
        error={error}
        required
      />
    </ModalForm>
  );
}
