import type { Connection, Project } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { deleteConnection, listConnections, rotateConnectionRoot, testConnection } from '../../api/credentials.js';
import { ApiError } from '../../api.js';
import { Table } from '../../components/Table.js';
import { useAsync, useSubmit } from '../../hooks.js';
import { address, KIND_LABEL, TLS_LABEL } from '../../lib/credentials.js';
import { dateTime, relativeTime } from '../../lib/format.js';
import { useToast } from '../../toast.js';
import { Async, Button, Confirm, Empty, FormError, Modal, Pill } from '../../ui.js';
import { ConnectionForm } from './ConnectionForm.js';

/**
 * D70: the project's connections to the databases whose users svcenv manages. Owners and project Admins only:
 * the tab is offered to them alone (D57), so nobody else meets the server's 403. The password is write-only.
 */
export function ConnectionsView({ project }: { project: Project }) {
  const toast = useToast();
  const conns = useAsync(() => listConnections(project.id), [project.id]);
  const [editing, setEditing] = useState<Connection | 'new' | null>(null);
  const [testing, setTesting] = useState<Connection | null>(null);
  const [rotating, setRotating] = useState<Connection | null>(null);
  const [deleting, setDeleting] = useState<Connection | null>(null);
  const add = () => setEditing('new');
  return (
    <section aria-labelledby="connections-title">
      <div class="section-head">
        <div>
          <h2 id="connections-title" class="section-title">
            Connections
          </h2>
          <p class="muted small">
            Databases whose users svcenv creates, removes and rotates: dynamic secrets lease short-lived users through
            them, and rotations change stored passwords. Only Owners and project Admins see them.
          </p>
        </div>
        <Button variant="primary" onClick={add}>
          Add connection
        </Button>
      </div>
      <Async state={conns}>
        {({ connections: list }) =>
          list.length === 0 ? (
            <Empty title="No connections" action={<Button onClick={add}>Add a connection</Button>}>
              PostgreSQL, MySQL / MariaDB or Redis, with a user that may create other users.
            </Empty>
          ) : (
            <Table
              class="table-cards connections-table"
              columns={['Name', 'Database', 'User', 'TLS', 'Used by', 'Root password']}
              actions
              testId="connections"
            >
              {list.map((c) => (
                <tr key={c.name} data-testid="connection-row">
                  <td data-label="Name">
                    <strong>{c.name}</strong>
                    <div class="muted small nowrap">{KIND_LABEL[c.kind]}</div>
                  </td>
                  <td data-label="Database">
                    <code class="break-all">{address(c)}</code>
                  </td>
                  <td data-label="User">
                    <code class="break-all">{c.username}</code>
                  </td>
                  <td class="small" data-label="TLS">
                    <Pill tone={c.tls.mode === 'disable' ? 'warn' : 'neutral'}>{TLS_LABEL[c.tls.mode]}</Pill>
                  </td>
                  <td class="small" data-label="Used by" data-testid="connection-used-by">
                    {c.usedBy === 0 ? (
                      <span class="muted">nothing</span>
                    ) : (
                      <span title="Dynamic secrets and rotations that use it">
                        {c.usedBy}{' '}
                        <span class="muted">
                          secret{c.usedBy === 1 ? '' : 's'} or rotation{c.usedBy === 1 ? '' : 's'}
                        </span>
                      </span>
                    )}
                  </td>
                  <td class="small" data-label="Root password" data-testid="connection-root">
                    {c.rootRotatedAt ? (
                      <div title={dateTime(c.rootRotatedAt)}>
                        rotated {relativeTime(c.rootRotatedAt)}
                        <div class="muted">only svcenv knows it</div>
                      </div>
                    ) : (
                      <span class="muted">as entered</span>
                    )}
                  </td>
                  <td class="cell-actions">
                    <div class="row-actions">
                      <Button size="sm" aria-label={`Test ${c.name}`} onClick={() => setTesting(c)}>
                        Test
                      </Button>
                      <Button size="sm" variant="ghost" aria-label={`Edit ${c.name}`} onClick={() => setEditing(c)}>
                        Edit
                      </Button>
                      <Button
                        size="sm"
                        variant="ghost"
                        aria-label={`Rotate root password of ${c.name}`}
                        onClick={() => setRotating(c)}
                      >
                        Rotate root
                      </Button>
                      <Button
                        size="sm"
                        variant="ghost"
                        class="danger-text"
                        aria-label={`Delete ${c.name}`}
                        onClick={() => setDeleting(c)}
                      >
                        Delete
                      </Button>
                    </div>
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Async>
      {editing && (
        <ConnectionForm
          projectId={project.id}
          connection={editing === 'new' ? undefined : editing}
          onClose={() => setEditing(null)}
          onSaved={async (c) => {
            const created = editing === 'new';
            setEditing(null);
            toast(created ? `Connection ${c.name} added` : `Connection ${c.name} saved`);
            await conns.reload();
          }}
        />
      )}
      {testing && <TestDialog projectId={project.id} connection={testing} onClose={() => setTesting(null)} />}
      {rotating && (
        <Confirm
          title={`Rotate the root password of ${rotating.name}?`}
          action="Rotate root password"
          body={
            <div class="stack-sm">
              <p>
                svcenv sets a new random password for <code>{rotating.username}</code>, the connection’s own user, and
                keeps it sealed. Afterwards <strong>no person knows that password</strong>: nobody can log in as{' '}
                <code>{rotating.username}</code> with the old one, and nobody can be told the new one.
              </p>
              <p>
                Make sure svcenv is the only thing that uses this user (not an application, a script or a person);
                anything else that logs in as it stops working.
              </p>
            </div>
          }
          onClose={() => setRotating(null)}
          onConfirm={async () => {
            await rotateConnectionRoot(project.id, rotating.name);
            setRotating(null);
            toast(`The root password of ${rotating.name} was rotated; only svcenv knows it`);
            await conns.reload();
          }}
        />
      )}
      {deleting && (
        <DeleteConnection
          projectId={project.id}
          connection={deleting}
          onClose={() => setDeleting(null)}
          onDeleted={async () => {
            setDeleting(null);
            toast(`Connection ${deleting.name} deleted`);
            await conns.reload();
          }}
        />
      )}
    </section>
  );
}

/** Logs in and out with the connection, and says what happened in the server's words. */
function TestDialog({
  projectId,
  connection: c,
  onClose,
}: {
  projectId: string;
  connection: Connection;
  onClose: () => void;
}) {
  const [result, setResult] = useState<{ ok: boolean; message: string } | null>(null);
  const { busy, error, submit } = useSubmit();
  const run = submit(async () => {
    setResult(null);
    setResult(await testConnection(projectId, c.name));
  });
  return (
    <Modal title={`Test ${c.name}`} onClose={onClose}>
      <div class="stack">
        <p class="muted small">
          svcenv logs in to <code class="break-all">{address(c)}</code> as <code>{c.username}</code> and out again;
          nothing is changed.
        </p>
        {result && (
          <div class={`alert ${result.ok ? 'alert-ok' : 'alert-error'}`} role="status" data-testid="connection-test">
            <div>
              <strong class="alert-title">{result.ok ? 'It works:' : 'It failed:'}</strong>{' '}
              <span>{result.message}</span>
            </div>
          </div>
        )}
        <FormError error={error} />
        <div class="row-end">
          <Button onClick={onClose}>Close</Button>
          <Button variant="primary" busy={busy} onClick={run}>
            {result || error ? 'Test again' : 'Run the test'}
          </Button>
        </div>
      </div>
    </Modal>
  );
}

/** Delete; a connection still in use is refused (409), and the dialog says what to remove first. */
function DeleteConnection({
  projectId,
  connection: c,
  onClose,
  onDeleted,
}: {
  projectId: string;
  connection: Connection;
  onClose: () => void;
  onDeleted: () => Promise<void>;
}) {
  const [inUse, setInUse] = useState<string | null>(null);
  if (inUse !== null || c.usedBy > 0) {
    return (
      <Modal title={`${c.name} is in use`} onClose={onClose}>
        <div class="stack">
          <div class="alert alert-warn" role="alert" data-testid="connection-in-use">
            <div>
              {c.usedBy > 0
                ? `${c.usedBy} dynamic secret${c.usedBy === 1 ? '' : 's'} or rotation${c.usedBy === 1 ? '' : 's'} use this connection.`
                : inUse}{' '}
              Delete them (or bind them to another connection) in each environment’s Credentials tab first; then the
              connection can go.
            </div>
          </div>
          <div class="row-end">
            <Button onClick={onClose}>Close</Button>
          </div>
        </div>
      </Modal>
    );
  }
  return (
    <Confirm
      title={`Delete ${c.name}?`}
      action="Delete connection"
      body={
        <p>svcenv forgets this connection and its password. Users it made before are already gone with their leases.</p>
      }
      onClose={onClose}
      onConfirm={async () => {
        try {
          await deleteConnection(projectId, c.name);
        } catch (e) {
          if (e instanceof ApiError && e.status === 409) return setInUse(e.message);
          throw e;
        }
        await onDeleted();
      }}
    />
  );
}
