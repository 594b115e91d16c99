import type { Identity } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { deleteIdentity } from '../../api/identities.js';
import { Table } from '../../components/Table.js';
import { isOwner, useSession } from '../../session.js';
import { useToast } from '../../toast.js';
import { Async, Button, Confirm, Empty, PageHeader } from '../../ui.js';
import { IdentityForm } from './IdentityForm.js';
import { IdentityRow } from './IdentityRow.js';
import { SetupDialog } from './SetupDialog.js';
import { useIdentities } from './useIdentities.js';

/**
 * D60: the workspace's workload identities, for its Owners (the server refuses anyone else, and the nav
 * offers the page to Owners only): CI jobs and pods that sign in with their platform's JWT.
 */
export function IdentitiesPage() {
  const { user } = useSession();
  if (!isOwner(user)) {
    return (
      <>
        <PageHeader title="Identities" />
        <Empty title="Owners only">Workload identities are managed by the workspace’s Owners.</Empty>
      </>
    );
  }
  return <Identities />;
}

function Identities() {
  const toast = useToast();
  const { identities, projects, projectName } = useIdentities();
  const [editing, setEditing] = useState<Identity | 'new' | null>(null);
  const [setup, setSetup] = useState<Identity | null>(null);
  const [deleting, setDeleting] = useState<Identity | null>(null);
  const create = () => setEditing('new');
  return (
    <>
      <PageHeader
        title="Identities"
        subtitle="CI jobs and pods sign in with the JWT their platform gives them, for a short-lived token: no stored secret."
        actions={
          <Button variant="primary" onClick={create}>
            New identity
          </Button>
        }
      />
      <Async state={identities}>
        {({ identities: list }) =>
          list.length === 0 ? (
            <Empty title="No identities" action={<Button onClick={create}>Create an identity</Button>}>
              Start from GitHub Actions, GitLab CI or Kubernetes.
            </Empty>
          ) : (
            <Table
              class="table-cards identities-table"
              columns={['Name', 'Issuer', 'Matches', 'Access', 'Allowed from', 'Last login']}
              actions
            >
              {list.map((i) => (
                <IdentityRow
                  key={i.id}
                  identity={i}
                  projectName={projectName(i.projectId)}
                  onSetup={() => setSetup(i)}
                  onEdit={() => setEditing(i)}
                  onDelete={() => setDeleting(i)}
                />
              ))}
            </Table>
          )
        }
      </Async>
      {editing && (
        <IdentityForm
          identity={editing === 'new' ? undefined : editing}
          projects={projects}
          onClose={() => setEditing(null)}
          onSaved={async (i) => {
            const created = editing === 'new';
            setEditing(null);
            toast(created ? `${i.name} created` : `${i.name} saved`);
            if (created) setSetup(i);
            await identities.reload();
          }}
        />
      )}
      {setup && <SetupDialog identity={setup} onClose={() => setSetup(null)} />}
      {deleting && (
        <Confirm
          title={`Delete ${deleting.name}?`}
          action="Delete"
          body={<p>Its tokens stop working at once, and jobs signing in as it are refused.</p>}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await deleteIdentity(deleting.id);
            setDeleting(null);
            toast(`${deleting.name} deleted`);
            await identities.reload();
          }}
        />
      )}
    </>
  );
}
