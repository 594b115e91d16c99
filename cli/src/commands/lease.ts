import { render } from '@svcenv/contract/formats';
import { Api } from '../api.js';
import { type Command, settingFlags, targetFlags } from '../command.js';
import { parseDuration, requireTarget, requireToken, resolveSettings } from '../config.js';
import { CliError, looksLikeToken, shown, usageError } from '../errors.js';
import { createLease, revokeLease } from '../leases.js';
import { FORMAT_READERS, type PullFormat } from '../remote.js';

/** pull's formats that hold a lease's few variables without a manifest around them (k8s needs a Secret name). */
const LEASE_FORMATS = ['dotenv', 'json', 'shell', 'docker'] as const satisfies readonly PullFormat[];
type LeaseFormat = (typeof LEASE_FORMATS)[number];

const NAME = /^[a-z][a-z0-9_-]{0,62}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * D71 `svcenv lease <name>`: one lease of a dynamic secret, its values printed on stdout in one of pull's
 * formats (the user asked for them: not scrubbed), its id and expiry on stderr. Nothing renews or revokes it:
 * it ends at its expiry, or with `svcenv lease revoke <name> <id>` (ADR 0030).
 */
export const leaseCommand: Command = {
  name: 'lease',
  summary: "Lease a dynamic secret's database user and print its values",
  usage: `svcenv lease <name> [--ttl <duration>] [--format ${LEASE_FORMATS.join('|')}] [--project <id|slug>] [--env <name>] | lease revoke <name> <lease-id>`,
  flags: {
    ...targetFlags,
    ttl: {
      type: 'string',
      description: "how long the lease lasts: 90s, 30m, 24h (default: the dynamic secret's, often 1h; at least 30s)",
    },
    format: { type: 'string', description: `${LEASE_FORMATS.join(', ')} (default dotenv)` },
  },
  positionals: ['revoke'],
  details:
    "The values (a database user's name and password, and whatever else the dynamic secret gives) go to\n" +
    'stdout; the lease id, the user name and the expiry go to stderr. The lease is not renewed: the server\n' +
    'removes the user when it expires, or at once with `svcenv lease revoke <name> <lease-id>` (the\n' +
    "lease's creator, or a write-scope token). `svcenv run` leases by itself and revokes when the command\n" +
    'ends: prefer it for a program. A read-scope token suffices to lease.\n' +
    `Formats:\n${LEASE_FORMATS.map((f) => `  ${f.padEnd(8)}${FORMAT_READERS[f]}`).join('\n')}`,
  async run(args, ctx) {
    const [first, ...rest] = args.positionals;
    if (first === undefined) throw usageError('name the dynamic secret to lease', 'svcenv lease <name>');
    const settings = resolveSettings(settingFlags(args), ctx.env, ctx.cwd);
    if (first === 'revoke' && rest.length) {
      const [name, id, ...extra] = rest;
      if (args.flags.ttl !== undefined || args.flags.format !== undefined) {
        throw usageError('--ttl and --format do not apply to `lease revoke`');
      }
      if (id === undefined || extra.length) {
        throw usageError(
          '`lease revoke` takes the dynamic secret and the lease id',
          'svcenv lease revoke db <lease-id>',
        );
      }
      checkName(name!);
      if (!UUID.test(id)) throw usageError(`${shown(id)} is not a lease id`, 'the id printed by `svcenv lease`');
      const api = new Api(settings.apiUrl, requireToken(settings));
      await revokeLease(api, requireTarget(settings), { name: name!, id });
      return { stderr: `lease ${id} of ${name} revoked\n` };
    }
    if (rest.length) throw usageError(`unexpected argument ${shown(rest[0]!)}`, 'svcenv lease <name> [--ttl 1h]');
    checkName(first);
    const format = (args.flags.format as string | undefined) ?? 'dotenv';
    if (!(LEASE_FORMATS as readonly string[]).includes(format)) {
      throw usageError(
        `unknown --format ${looksLikeToken(format) ? '(an access token, not repeated)' : format}`,
        `use one of: ${LEASE_FORMATS.join(', ')}`,
      );
    }
    const ttlSeconds =
      typeof args.flags.ttl === 'string' ? Math.ceil(parseDuration(args.flags.ttl, '--ttl') / 1000) : undefined;
    if (ttlSeconds === 0) throw usageError('--ttl must be at least 30s');
    const api = new Api(settings.apiUrl, requireToken(settings));
    const target = requireTarget(settings);
    const lease = await createLease(api, target, first, ttlSeconds);
    const entries = Object.entries(lease.values);
    return {
      stdout: render(format as LeaseFormat, first, entries),
      stderr:
        `lease ${lease.id} of ${first}: user ${lease.username}, expires ${lease.expiresAt.toISOString()}\n` +
        `revoke it early with: svcenv lease revoke ${first} ${lease.id}\n`,
    };
  },
};

/** D71's dynamic secret names; anything else is refused before any request, and a token-like one not repeated. */
function checkName(name: string): void {
  if (!NAME.test(name)) {
    throw new CliError(
      'USAGE',
      `${shown(name)} is not a dynamic secret name`,
      'names are lower-case letters, digits, - and _, starting with a letter',
    );
  }
}
