import type { Project } from '@svcenv/contract';
import { cliLatest } from '../api/cli.js';
import { useAsync } from '../hooks.js';
import { CopyButton } from '../ui.js';

const OS_NAMES: Record<string, string> = { linux: 'Linux', darwin: 'macOS' };

/**
 * How to use a new token with the CLI on this server: login names `--api-url` (without it
 * the CLI tries its default server and the first try fails) and reads the token from stdin (`--token -`,
 * kept out of the shell's history); pull names the project by its slug (D48, D58). Below, the CLI binaries
 * this server serves (`GET /v1/cli/latest`).
 */
export function CliSnippet({ project, envs }: { project: Project | undefined; envs: string[] }) {
  const release = useAsync(cliLatest, []);
  const env = envs.find((e) => e !== '*') ?? project?.envs[0] ?? '<env>';
  const login = `svcenv login --api-url ${location.origin} --token -`;
  const pull = `svcenv pull --project ${project?.slug ?? '<project-slug>'} --env ${env}`;
  return (
    <div class="cli-snippet" data-testid="cli-snippet">
      <p class="small">
        With the CLI: sign in (paste the token, then press Ctrl-D), then pull
        {project ? '' : '; svcenv projects lists the slugs'}.
      </p>
      <pre class="code-block">
        <code>{`${login}\n${pull}`}</code>
      </pre>
      <div class="row-end">
        <CopyButton text={`${login}\n${pull}`} label="Copy commands" />
      </div>
      <p class="muted small">
        Or set <code>SVCENV_TOKEN</code> and <code>SVCENV_API_URL={location.origin}</code> in CI.{' '}
        {release.data && release.data.assets.length > 0 ? (
          <>
            Get the CLI ({release.data.version}):{' '}
            {release.data.assets.map((a, i) => (
              <span key={a.url}>
                {i > 0 ? ', ' : ''}
                <a href={a.url} download>
                  {OS_NAMES[a.os] ?? a.os} {a.arch}
                </a>
              </span>
            ))}
            .
          </>
        ) : release.data ? (
          'This server has no CLI binaries to download.'
        ) : null}
      </p>
    </div>
  );
}
