import { createHash } from 'node:crypto';
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { type CliReleaseManifest, cliArch, cliDownloadParams, cliOs, pathOf } from '@svcenv/contract';
import { operations as ops } from '@svcenv/contract/operations';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { route } from '../http/operation.js';

/** One binary as the manifest describes it, and the open file its downloads are read from. */
interface Asset {
  size: number;
  sha256: string;
  file: FileHandle;
}

/** What the process serves: the manifest (made once) and each binary by `<os>-<arch>`. */
interface Release {
  manifest: CliReleaseManifest;
  assets: Map<string, Asset>;
}

/**
 * D39/D41: the CLI release manifest and the binaries this server was built with, from
 * `<distDir>/svcenv-<os>-<arch>`. No credential: the binaries hold no secret, and `upgrade` must work
 * before `login`. Asset URLs are paths under the API base URL, so they stay right behind a TLS-terminating
 * proxy (ADR 0001-cli).
 *
 * The release is read once per process, on the first request of either endpoint (so a server that is never
 * asked pays nothing at start-up): each binary is opened, hashed and kept open. From then on the manifest is
 * answered from memory, touching no file (under load a `stat` per request queued behind every other use of
 * libuv's four threads, bcrypt included, and a fuzzing run saw 5.8 s answers), and a download streams the
 * file that was hashed: a rebuild renamed into place (cli/build.ts) changes neither what the manifest says
 * nor what is downloaded until the server restarts, which is when it serves the new build.
 */
export async function cliReleaseRoutes(
  app: FastifyInstance,
  opts: { distDir: string; version: string },
): Promise<void> {
  // The manifest's response schema is zod; set here too, so the plugin also serves from a bare Fastify (the
  // upgrade test's stand-in release server).
  app.setSerializerCompiler(serializerCompiler);
  let release: Promise<Release> | undefined;
  const loaded = () => {
    release ??= readRelease(opts.distDir, opts.version, app.log);
    return release;
  };
  app.addHook('onClose', async () => {
    if (!release) return;
    for (const a of (await release).assets.values()) await a.file.close().catch(() => {});
  });

  route(app, ops.cliLatest, async (): Promise<CliReleaseManifest> => (await loaded()).manifest);

  // Params are checked in the handler so that an unknown os or arch is a 404 (no such file), not a 400.
  route(app, ops.cliDownload, async (request, reply) => {
    const params = cliDownloadParams.safeParse(request.params);
    if (!params.success) return notFound(reply);
    const { os, arch } = params.data;
    const a = (await loaded()).assets.get(`${os}-${arch}`);
    if (!a) return notFound(reply);
    return reply
      .header('content-type', 'application/octet-stream')
      .header('content-length', a.size)
      .header('content-disposition', `attachment; filename="svcenv-${os}-${arch}"`)
      .header('x-checksum-sha256', a.sha256)
      .send(bytesOf(a));
  });
}

function notFound(reply: FastifyReply) {
  return reply
    .status(404)
    .send({ error: { code: 'NOT_FOUND', message: 'no svcenv binary for that os and arch', field: 'os' } });
}

/** Every binary present in `distDir`, hashed; one that cannot be read is left out of the manifest (and logged). */
async function readRelease(distDir: string, version: string, log: FastifyBaseLogger): Promise<Release> {
  const manifest: CliReleaseManifest = { version, assets: [] };
  const assets = new Map<string, Asset>();
  for (const os of cliOs.options) {
    for (const arch of cliArch.options) {
      const path = join(distDir, `svcenv-${os}-${arch}`);
      const asset = await readAsset(path).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') log.warn({ path, code: err.code }, 'CLI binary not served: it cannot be read');
        return null;
      });
      if (!asset) continue;
      assets.set(`${os}-${arch}`, asset);
      manifest.assets.push({ os, arch, url: pathOf(ops.cliDownload, { os, arch }), sha256: asset.sha256 });
    }
  }
  return { manifest, assets };
}

const CHUNK = 64 * 1024;

/**
 * The first `size` bytes of the asset's open file, by positioned reads of the shared handle: any number of
 * downloads at once, each from byte 0. Not `createReadStream`: destroying such a stream (a client that goes
 * away mid-download) closes the handle under every later download, whatever `autoClose` says.
 */
function bytesOf(a: Pick<Asset, 'file' | 'size'>): Readable {
  let at = 0;
  return new Readable({
    highWaterMark: CHUNK,
    read() {
      if (at >= a.size) return void this.push(null);
      const want = Math.min(CHUNK, a.size - at);
      a.file.read(Buffer.allocUnsafe(want), 0, want, at).then(
        ({ bytesRead, buffer }) => {
          // Fewer bytes than hashed: the file was cut short in place; the download ends short, and the
          // checksum the client verifies (D39) tells it.
          if (bytesRead === 0) return void this.push(null);
          at += bytesRead;
          this.push(bytesRead === want ? buffer : buffer.subarray(0, bytesRead));
        },
        (err: Error) => this.destroy(err),
      );
    },
  });
}

async function readAsset(path: string): Promise<Asset | null> {
  const file = await open(path, 'r');
  try {
    const st = await file.stat();
    if (!st.isFile()) {
      await file.close();
      return null;
    }
    const hash = createHash('sha256');
    // Exactly the bytes a download sends.
    for await (const chunk of bytesOf({ file, size: st.size })) hash.update(chunk as Buffer);
    return { size: st.size, sha256: hash.digest('hex'), file };
  } catch (err) {
    await file.close().catch(() => {});
    throw err;
  }
}
