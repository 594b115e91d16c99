/**
 * The bare relay of `svcenv run`, without scrubbing: run under the host Bun by bench/cli.bench.ts as
 * `bun bench/relay.ts cat FILE`. It starts the command with Bun.spawn and copies its stdout to fd 1
 * with writeSync, the same data path as `svcenv run` (run.ts: startBun, Sink) minus the scrubber, so
 * it is the ceiling any scrubber on this runtime can reach: the child's bytes cross a socket pair.
 */
import { writeSync } from 'node:fs';

/** The part of Bun's API used here (the repository does not carry Bun's types). */
declare const Bun: {
  spawn(
    cmd: string[],
    opts: { stdin: 'inherit'; stdout: 'pipe'; stderr: 'inherit' },
  ): { stdout: AsyncIterable<Uint8Array>; exited: Promise<number> };
};

const proc = Bun.spawn(process.argv.slice(2), { stdin: 'inherit', stdout: 'pipe', stderr: 'inherit' });
for await (const chunk of proc.stdout) {
  let off = 0;
  while (off < chunk.length) off += writeSync(1, chunk, off);
}
process.exit(await proc.exited);
