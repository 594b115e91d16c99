import type { AccessToken } from '@svcenv/contract';
import { useState } from 'preact/hooks';
import { revokeToken, rotateToken } from '../../api/tokens.js';
import { CliSnippet } from '../../components/CliSnippet.js';
import { GetCli } from '../../components/GetCli.js';
import { OnceSecretDialog } from '../../components/OnceSecretDialog.js';
import { Table } from '../../components/Table.js';
import { useAction, useToast } from '../../toast.js';
import { Async, Button, Confirm, Empty, PageHeader } from '../../ui.js';
import { CreateTokenDialog } from './CreateTokenDialog.js';
import { TokenRow } from './TokenRow.js';
import { useTokens } from './useTokens.js';

/** A token's plaintext, shown once after creating or rotating it, with the CLI commands for its scope. */
interface Shown {
  title: string;
  token: string;
  projectId: string | null;
  envs: string[];
}

export function TokensPage() {
  const toast = useToast();
  const act = useAction();
  const { tokens, projects, project, projectName } = useTokens();
  const [creating, setCreating] = useState(false);
  const [shown, setShown] = useState<Shown | null>(null);
  const [revoking, setRevoking] = useState<AccessToken | null>(null);
  const rotate = (t: AccessToken) =>
    act(async () => {
      const r = await rotateToken(t.id);
      setShown({ title: `${t.name} rotated`, token: r.token, projectId: t.projectId, envs: t.envs });
      await tokens.reload();
    });
  return (
    <>
      <PageHeader
        title="Access tokens"
        subtitle="For the CLI, CI and the operator. A token can do at most what you can, limited further by its scope."
        actions={
          <Button variant="primary" onClick={() => setCreating(true)}>
            New token
          </Button>
        }
      />
      <Async state={tokens}>
        {({ tokens: list }) =>
          list.length === 0 ? (
            <Empty title="No tokens" action={<Button onClick={() => setCreating(true)}>Create a token</Button>}>
              Create one, then run <code>svcenv login --token …</code> or set <code>SVCENV_TOKEN</code> in CI.
            </Empty>
          ) : (
            <Table
              class="table-cards tokens-table"
              columns={['Name', 'Token', 'Scope', 'Access', 'Last used', 'Expires']}
              actions
            >
              {list.map((t) => (
                <TokenRow
                  key={t.id}
                  token={t}
                  projectName={projectName(t.projectId)}
                  onRotate={() => rotate(t)}
                  onRevoke={() => setRevoking(t)}
                />
              ))}
            </Table>
          )
        }
      </Async>
      {/* Where someone making a token looks for the CLI it is for (D39). */}
      <h2 class="section-title" id="tokens-get-cli">
        Get the CLI
      </h2>
      <GetCli labelledBy="tokens-get-cli" />
      {creating && (
        <CreateTokenDialog
          projects={projects}
          onClose={() => setCreating(false)}
          onCreated={async (t) => {
            setCreating(false);
            setShown({ title: `Token ${t.name} created`, token: t.token, projectId: t.projectId, envs: t.envs });
            await tokens.reload();
          }}
        />
      )}
      {shown && (
        <OnceSecretDialog
          title={shown.title}
          value={shown.token}
          note="Copy this token now: it is shown only once and cannot be recovered."
          onClose={() => setShown(null)}
        >
          <CliSnippet project={project(shown.projectId)} envs={shown.envs} />
        </OnceSecretDialog>
      )}
      {revoking && (
        <Confirm
          title={`Revoke ${revoking.name}?`}
          action="Revoke"
          body={<p>Anything using it stops working on its very next request.</p>}
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await revokeToken(revoking.id);
            setRevoking(null);
            toast(`${revoking.name} revoked`);
            await tokens.reload();
          }}
        />
      )}
    </>
  );
}
