import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type CliReleaseManifest, cliArch, cliDownloadParams, cliOs, pathOf } from '@svcenv/contract';
import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { route } from '../http/operation.js';

/**
 * D39/D41: the CLI release manifest and the binaries this server was built with, from
 * `<distDir>/svcenv-<os>-<arch>`. No credential: the binaries hold no secret, and `upgrade` must work
 * before `login`. Each file's SHA-256 is computed once and cached while its size and mtime stay the
 * same (a rebuild of dist/cli is picked up without a restart). Asset URLs are paths under the API base
 * URL, so they stay right behind a TLS-terminating proxy (ADR 0001-cli).
 */
export async function cliReleaseRoutes(
  app: FastifyInstance,
  opts: { distDir: string; version: string },
): Promise<void> {
  // The manifest's response schema is zod; set here too, so the plugin also serves from a bare Fastify (the
  // upgrade test's stand-in release server).
  app.setSerializerCompiler(serializerCompiler);
  const hashes = new Map<string, { stamp: string; sha256: Promise<string> }>();

  async function asset(os: string, arch: string): Promise<{ path: string; size: number; sha256: string } | null> {
    const path = join(opts.distDir, `svcenv-${os}-${arch}`);
    const st = await stat(path).catch(() => null);
    if (!st?.isFile()) return null;
    const stamp = `${st.size}:${st.mtimeMs}`;
    let entry = hashes.get(path);
    if (entry?.stamp !== stamp) {
      entry = { stamp, sha256: sha256File(path) };
      hashes.set(path, entry);
      entry.sha256.catch(() => hashes.delete(path));
    }
    return { path, size: st.size, sha256: await entry.sha256 };
  }

  route(app, ops.cliLatest, async (): Promise<CliReleaseManifest> => {
    const assets: CliReleaseManifest['assets'] = [];
    for (const os of cliOs.options) {
      for (const arch of cliArch.options) {
        const a = await asset(os, arch);
        if (a) assets.push({ os, arch, url: pathOf(ops.cliDownload, { os, arch }), sha256: a.sha256 });
      }
    }
    return { version: opts.version, assets };
  });

  // Params are checked in the handler so that an unknown os or arch is a 404 (no such file), not a 400.
  route(app, ops.cliDownload, async (request, reply) => {
    const params = cliDownloadParams.safeParse(request.params);
    const a = params.success ? await asset(params.data.os, params.data.arch) : null;
    if (!params.success || !a) return notFound(reply, 'no svcenv binary for that os and arch');
    return reply
      .header('content-type', 'application/octet-stream')
      .header('content-length', a.size)
      .header('content-disposition', `attachment; filename="svcenv-${params.data.os}-${params.data.arch}"`)
      .header('x-checksum-sha256', a.sha256)
      .send(createReadStream(a.path));
  });
}

function notFound(reply: FastifyReply, message: string) {
  return reply.status(404).send({ error: { code: 'NOT_FOUND', message, field: 'os' } });
}

function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (d) => hash.update(d))
      .on('end', () => resolve(hash.digest('hex')))
      .on('error', reject);
  });
}
