import { GetCli } from '../components/GetCli.js';
import { Link, PageHeader } from '../ui.js';

/** "Get the CLI" from the sidebar: the builds this server serves (D39) and what to do next. */
export function CliPage() {
  return (
    <>
      <PageHeader
        title="Get the CLI"
        subtitle="svcenv pulls variables into a file or a process, and pushes them back, from a terminal or CI."
      />
      <GetCli />
      <p class="small cli-next">
        Next: <Link to="/tokens">create an access token</Link>; its dialog gives the commands to sign in and pull.
      </p>
    </>
  );
}
