import { getInstanceSettings, listInstanceUsers, listInstanceWorkspaces } from '../../api/admin.js';
import { useAsync } from '../../hooks.js';
import { useSession } from '../../session.js';
import { Async, Empty, ErrorBanner, PageHeader } from '../../ui.js';
import { SignupModeCard } from './SignupModeCard.js';
import { UsersTable } from './UsersTable.js';
import { WorkspacesTable } from './WorkspacesTable.js';

/**
 * D69: the instance's administrators run their own server from here: every workspace's plan (D15), a
 * password reset link for anyone when the server sends no email (D54), and who may sign up. The nav shows
 * it to administrators only; the server refuses everyone else (403), which this page says, too.
 */
export function InstancePage() {
  const { user } = useSession();
  if (!user.instanceAdmin) {
    return (
      <>
        <PageHeader title="Instance" />
        <ErrorBanner
          error={
            new Error(
              'Only administrators of this svcenv instance can see this page. Ask your instance administrator for plan changes or a password reset link.',
            )
          }
        />
      </>
    );
  }
  return <AdminView />;
}

function AdminView() {
  const settings = useAsync(getInstanceSettings, []);
  const workspaces = useAsync(listInstanceWorkspaces, []);
  const users = useAsync(listInstanceUsers, []);
  return (
    <>
      <PageHeader
        title="Instance"
        subtitle="Every workspace and account on this server. Only instance administrators see this page."
      />
      <Async state={settings}>{(s) => <SignupModeCard mode={s.signup} onSaved={settings.setData} />}</Async>
      <h2 class="section-title">Workspaces</h2>
      <p class="muted small section-note">
        A workspace's plan sets its limits (projects, members with pending invites, environments per project). New
        workspaces get <code>DEFAULT_PLAN</code>.
      </p>
      <Async state={workspaces}>
        {({ workspaces: list }) => <WorkspacesTable workspaces={list} onChanged={workspaces.reload} />}
      </Async>
      <h2 class="section-title">Users</h2>
      <Async state={users}>
        {({ users: list }) =>
          list.length === 0 ? <Empty title="No users yet">Accounts appear here.</Empty> : <UsersTable users={list} />
        }
      </Async>
    </>
  );
}
