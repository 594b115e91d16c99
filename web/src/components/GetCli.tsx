import type { CliReleaseManifest } from '../api/cli.js';
import { cliLatest } from '../api/cli.js';
import { useAsync } from '../hooks.js';
import { CopyButton, ErrorBanner, Spinner } from '../ui.js';

type Asset = CliReleaseManifest['assets'][number];

const OS_NAMES: Record<string, string> = { linux: 'Linux', darwin: 'macOS' };
const ARCH_NAMES: Record<string, string> = { x64: 'x64 (Intel, AMD)', arm64: 'arm64 (Apple silicon, Graviton)' };

/** An asset's name as people read it: "macOS arm64". */
export const assetLabel = (a: Pick<Asset, 'os' | 'arch'>) => `${OS_NAMES[a.os] ?? a.os} ${a.arch}`;

/** The one line that downloads the binary from this server and puts it on the PATH. */
export const installLine = (a: Pick<Asset, 'url'>, origin = location.origin) =>
  `curl -fsSL ${origin}${a.url} -o svcenv && chmod +x svcenv && sudo mv svcenv /usr/local/bin/`;

/** The browser's operating system, to list its builds first (the architecture cannot be told reliably). */
function guessOs(): string | null {
  const ua = navigator.userAgent;
  return /Mac OS X|Macintosh/.test(ua) ? 'darwin' : /Linux|X11/.test(ua) ? 'linux' : null;
}

/** The CLI builds this server serves (D39, `GET /v1/cli/latest`), with the ones for this browser's OS first. */
export function useCliRelease() {
  const release = useAsync(cliLatest, []);
  const os = guessOs();
  const assets = [...(release.data?.assets ?? [])].sort((a, b) => Number(b.os === os) - Number(a.os === os));
  return { ...release, assets, version: release.data?.version };
}

/**
 * "Get the CLI": each build the server's manifest lists (D39, D41) with its download link and the one-line
 * install, copyable. Without builds the download addresses answer 404, so instead of dead links it says so and
 * who can build them.
 */
export function GetCli({ labelledBy }: { labelledBy?: string }) {
  const { assets, version, error, reload, data } = useCliRelease();
  return (
    <section class="panel get-cli" aria-labelledby={labelledBy} data-testid="get-cli">
      {error ? (
        <ErrorBanner error={error} onRetry={reload} />
      ) : !data ? (
        <Spinner />
      ) : assets.length === 0 ? (
        <p class="note" data-testid="cli-none">
          This server has no CLI builds to download yet: its download addresses answer “not found”. Whoever runs the
          server builds them with <code>npm run build:cli</code>, and they appear here.
        </p>
      ) : (
        <>
          <p class="muted small">
            svcenv {version}, one file with nothing else to install. Download it, or paste the line for your machine
            into a terminal (it asks for your password to put <code>svcenv</code> in <code>/usr/local/bin</code>). Then
            sign in with a token: <code>svcenv login --api-url {location.origin} --token -</code>.
          </p>
          <ul class="cli-assets" aria-label="CLI downloads">
            {assets.map((a) => {
              const line = installLine(a);
              return (
                <li key={`${a.os}-${a.arch}`} data-testid={`cli-${a.os}-${a.arch}`}>
                  <div class="cli-asset-head">
                    <strong>{assetLabel(a)}</strong>
                    <span class="muted small">{ARCH_NAMES[a.arch] ?? ''}</span>
                    <div class="toolbar-spacer" />
                    <a class="btn btn-secondary btn-sm" href={a.url} download={`svcenv-${a.os}-${a.arch}`}>
                      Download
                    </a>
                  </div>
                  <pre class="code-block cli-install">
                    <code>{line}</code>
                  </pre>
                  <div class="row-end">
                    <CopyButton text={line} label={`Copy the ${assetLabel(a)} install`} />
                  </div>
                </li>
              );
            })}
          </ul>
          <p class="muted small">
            Windows: use the Linux build under WSL. <code>svcenv upgrade</code> later fetches the newest build from this
            server and checks its SHA-256.
          </p>
        </>
      )}
    </section>
  );
}
