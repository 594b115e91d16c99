import { z } from 'zod';

/** D39/D41: the operating systems and architectures the CLI is built for. */
export const cliOs = z.enum(['linux', 'darwin']);
export const cliArch = z.enum(['x64', 'arm64']);

/** `GET /v1/cli/latest`. `url` is a path under the API base URL (ADR 0001-cli). */
export const cliReleaseManifest = z.object({
  version: z.string(),
  assets: z.array(
    z.object({
      os: cliOs,
      arch: cliArch,
      url: z.string(),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
    }),
  ),
});
export const cliDownloadParams = z.strictObject({ os: cliOs, arch: cliArch });

export type CliReleaseManifest = z.infer<typeof cliReleaseManifest>;
