import type { Project } from '@svcenv/contract';
import { CopyButton } from '../ui.js';
import { assetLabel, useCliRelease } from './GetCli.js';

/**
 * How to use a new token with the CLI on this server: login names `--api-url` (without it the CLI tries its
 * default server and the first try fails) and reads the token from stdin (`--token -`, kept out of the shell's
 * history); setup writes `.svcenv.json` in the project's folder (D58) so that pull needs no flags; both name
 * the project by its slug (D48, D58), never its id. Below, the CLI builds this server serves (D39) as direct
 * downloads: a link away would lose the token, which is shown only once.
 */
export function CliSnippet({ project, envs }: { project: Project | undefined; envs: string[] }) {
  const release = useCliRelease();
  const env = envs.find((e) => e !== '*') ?? project?.envs[0] ?? '<env>';
  const login = `svcenv login --api-url ${location.origin} --token -`;
  const setup = `svcenv setup --project ${project?.slug ?? '<project-slug>'} --env ${env}`;
  const commands = `${login}\n${setup}\nsvcenv pull`;
  return (
    <div class="cli-snippet" data-testid="cli-snippet">
      <p class="small">
        With the CLI: sign in (paste the token, then press Ctrl-D); then, in your project’s folder, save which project
        and environment it uses, and pull{project ? '' : '; svcenv projects lists the slugs'}.
      </p>
      <pre class="code-block">
        <code>{commands}</code>
      </pre>
      <div class="row-end">
        <CopyButton text={commands} label="Copy commands" />
      </div>
      <p class="muted small">
        Or set <code>SVCENV_TOKEN</code> and <code>SVCENV_API_URL={location.origin}</code> in CI.{' '}
        {release.assets.length > 0 ? (
          <>
            Get the CLI ({release.version}):{' '}
            {release.assets.map((a, i) => (
              <span key={a.url}>
                {i > 0 ? ', ' : ''}
                <a href={a.url} download={`svcenv-${a.os}-${a.arch}`}>
                  {assetLabel(a)}
                </a>
              </span>
            ))}
            ; the one-line installs are on this page under “Get the CLI”.
          </>
        ) : release.data ? (
          'This server has no CLI builds to download yet.'
        ) : null}
      </p>
    </div>
  );
}
