import { Api } from '../api.js';
import type { Parsed } from '../args.js';
import { type Command, type Context, settingFlags, targetFlags } from '../command.js';
import { requireTarget, requireToken, resolveSettings } from '../config.js';
import { CliError, closest, looksLikeToken, shown, usageError } from '../errors.js';
import { printable } from './vars.js';

const SUBCOMMANDS = ['request', 'list', 'withdraw'] as const;
type Sub = (typeof SUBCOMMANDS)[number];
const STATUSES = ['pending', 'approved', 'denied', 'withdrawn', 'expired', 'all'] as const;
/** D74: durationSeconds 300 to 604,800 (contract ACCESS_REQUEST_MIN_SECONDS / MAX). */
const MIN_S = 300;
const MAX_S = 604_800;

/** Which flags each subcommand takes beyond --project (a flag that would be ignored is an error). */
const SUB_FLAGS: Record<Sub, readonly string[]> = {
  request: ['env', 'permission', 'for', 'reason'],
  list: ['env', 'status', 'json'],
  withdraw: [],
};

/**
 * D74: access requests. `access request` asks for read or write on one environment for a while (the
 * project's Admins and the workspace's Owners are told); `access list` shows the caller's requests (all of
 * the project's for an Admin or Owner) with what each granted and until when; `access withdraw` takes back a
 * pending one. Approving and denying are a person's decision, made in the dashboard.
 */
export const accessCommand: Command = {
  name: 'access',
  summary: 'Request temporary access to an environment, list or withdraw requests',
  usage:
    'svcenv access request --env <name> --permission read|write --for <30m|1h|1d|7d> --reason <text> | access list [--status pending|approved|denied|withdrawn|expired|all] [--env <name>] [--json] | access withdraw ID [--project <id|slug>]',
  flags: {
    ...targetFlags,
    permission: { type: 'string', description: 'request: read or write' },
    for: { type: 'string', description: 'request: how long, 5m to 7d (e.g. 30m, 1h, 1d, 7d)' },
    reason: { type: 'string', description: 'request: why (1-500 characters), shown to the approvers' },
    status: { type: 'string', description: `list: ${STATUSES.join(', ')} (default: all)` },
    json: { type: 'boolean', description: 'list: the requests as JSON' },
  },
  positionals: SUBCOMMANDS,
  details:
    'svcenv access request --env prod --permission read --for 1h --reason "incident 42"\n' +
    "                              ask for access you do not have; the project's Admins and the\n" +
    "                              workspace's Owners are emailed and approve or deny it in the dashboard\n" +
    'svcenv access list            your requests (an Admin or Owner: all of the project), newest first,\n' +
    '                              with the time a grant has left\n' +
    'svcenv access withdraw ID     take back your own pending request\n' +
    'Durations: a number and m, h or d (30m, 1h, 1d, 7d), from 5m to 7d. ID is the id or its first\n' +
    'characters (at least 4), as the list shows them. An approved request gives the permission until it\n' +
    'ends by itself; a pending one expires after 24 hours.',
  async run(args, ctx) {
    const [first, ...operands] = args.positionals;
    const sub = subcommand(first);
    for (const flag of ['env', 'permission', 'for', 'reason', 'status', 'json']) {
      if (args.flags[flag] !== undefined && !SUB_FLAGS[sub].includes(flag)) {
        throw usageError(`--${flag} does not apply to \`access ${sub}\``, 'see: svcenv access --help');
      }
    }
    if (sub !== 'withdraw' && operands.length) {
      throw usageError(`\`access ${sub}\` takes no arguments`, 'see: svcenv access --help');
    }
    if (sub === 'withdraw' && operands.length !== 1) {
      throw usageError(
        '`access withdraw` takes exactly one ID',
        'svcenv access withdraw ID (see `svcenv access list`)',
      );
    }
    // Everything the request needs is checked before anything is sent.
    const body = sub === 'request' ? requestBody(args) : undefined;
    const status = typeof args.flags.status === 'string' ? args.flags.status : 'all';
    if (!(STATUSES as readonly string[]).includes(status)) {
      throw usageError(`unknown --status ${shown(status)}`, `use one of: ${STATUSES.join(', ')}`);
    }
    const project = projectOf(args, ctx, sub);
    const settings = resolveSettings(settingFlags(args), ctx.env, ctx.cwd);
    const api = new Api(settings.apiUrl, requireToken(settings));
    if (sub === 'request') return request(api, project, body!);
    if (sub === 'list') {
      const env = typeof args.flags.env === 'string' ? args.flags.env : undefined;
      return list(api, project, status, env, args.flags.json === true);
    }
    return withdraw(api, project, operands[0]!);
  },
};

function subcommand(word: string | undefined): Sub {
  if (word === undefined) {
    throw usageError('`access` needs a command', 'use `svcenv access request`, `access list` or `access withdraw`');
  }
  if ((SUBCOMMANDS as readonly string[]).includes(word)) return word as Sub;
  const guess = closest(word, SUBCOMMANDS);
  throw usageError(
    `unknown access command ${shown(word)}`,
    guess
      ? `did you mean \`svcenv access ${guess}\`?`
      : 'use `svcenv access request`, `access list` or `access withdraw`',
  );
}

/** The project: --project, $SVCENV_PROJECT, .svcenv.json or the config file (the env is the request's own). */
function projectOf(args: Parsed, ctx: Context, sub: Sub): string {
  const flags = settingFlags(args);
  const settings = resolveSettings(flags, ctx.env, ctx.cwd);
  if (sub === 'request') {
    // The environment asked for is --env (required), not the one the directory is set up for.
    return requireTarget({ ...settings, env: String(args.flags.env) }).project;
  }
  return requireTarget({ ...settings, env: settings.env ?? 'unused' }).project;
}

const UNIT_S: Record<string, number> = { m: 60, h: 3600, d: 86_400 };

/** `30m`, `1h`, `1d`, `7d` in seconds; null when it is not a duration. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+)\s*([mhd])$/i.exec(text.trim());
  if (!m) return null;
  return Number(m[1]) * UNIT_S[m[2]!.toLowerCase()]!;
}

/** `1h 30m`, `2d 4h`, `45m`: a duration as people read it (whole minutes). */
export function humanDuration(seconds: number): string {
  const total = Math.max(0, Math.round(seconds / 60));
  const d = Math.floor(total / 1440);
  const h = Math.floor((total % 1440) / 60);
  const min = total % 60;
  const parts = [d ? `${d}d` : '', h ? `${h}h` : '', min ? `${min}m` : ''].filter(Boolean);
  return parts.length ? parts.join(' ') : '0m';
}

function requestBody(args: Parsed) {
  const env = args.flags.env;
  if (typeof env !== 'string' || env === '') {
    throw usageError(
      '`access request` needs --env',
      'svcenv access request --env prod --permission read --for 1h --reason "..."',
    );
  }
  const permission = args.flags.permission;
  if (permission !== 'read' && permission !== 'write') {
    throw usageError(
      permission === undefined
        ? '`access request` needs --permission'
        : `unknown --permission ${shown(String(permission))}`,
      'use --permission read or --permission write',
    );
  }
  const given = args.flags.for;
  if (typeof given !== 'string') {
    throw usageError('`access request` needs --for', 'how long, from 5m to 7d: e.g. --for 1h');
  }
  const durationSeconds = parseDuration(given);
  if (durationSeconds === null) {
    throw usageError(`--for ${shown(given)} is not a duration`, 'a number and m, h or d: 30m, 1h, 1d, 7d');
  }
  if (durationSeconds < MIN_S || durationSeconds > MAX_S) {
    throw usageError(`--for ${shown(given)} is out of range`, 'access is requested for 5m to 7d');
  }
  const reason = typeof args.flags.reason === 'string' ? args.flags.reason.trim() : '';
  if (reason === '') {
    throw usageError('`access request` needs --reason', 'say why, for the approvers: --reason "incident 42"');
  }
  if (reason.length > 500) throw usageError(`--reason is ${reason.length} characters`, 'at most 500');
  return { env, permission, durationSeconds, reason } as const;
}

async function request(api: Api, project: string, body: NonNullable<ReturnType<typeof requestBody>>) {
  const { operations: ops } = await import('../schemas.js');
  const r = await api.json(ops.createAccessRequest, { params: { id: project }, body });
  return {
    stdout: `requested ${r.permission} on ${r.env} for ${humanDuration(r.durationSeconds)}: request ${r.id}, status ${r.status}\n`,
    stderr:
      "the project's Admins and the workspace's Owners were notified; they approve or deny it in the dashboard\n" +
      `follow it with: svcenv access list -p ${project}\n`,
  };
}

type Req = Awaited<ReturnType<typeof fetchAll>>[number];

async function fetchAll(api: Api, project: string, status?: string) {
  const { operations: ops } = await import('../schemas.js');
  const query = status && status !== 'all' ? { status: status as 'pending' } : {};
  return (await api.json(ops.listAccessRequests, { params: { id: project }, query })).accessRequests;
}

const when = (iso: string) => iso.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, 'Z');

/** What a request gives now: the time a live grant has left, when it ended, or when a pending one lapses. */
function standing(r: Req, now: number): string {
  if (r.status === 'approved' && r.grantExpiresAt) {
    const left = (Date.parse(r.grantExpiresAt) - now) / 1000;
    return left > 0
      ? `${humanDuration(left)} left (until ${when(r.grantExpiresAt)})`
      : `ended ${when(r.grantExpiresAt)}`;
  }
  if (r.status === 'expired' && r.grantExpiresAt) return `ended ${when(r.grantExpiresAt)}`;
  if (r.status === 'pending') return `asks ${humanDuration(r.durationSeconds)}, lapses ${when(r.pendingUntil)}`;
  return r.decidedAt ? `${r.status} ${when(r.decidedAt)}` : '';
}

async function list(api: Api, project: string, status: string, env: string | undefined, json: boolean) {
  const all = await fetchAll(api, project, status);
  const requests = env ? all.filter((r) => r.env === env) : all;
  if (json) return { stdout: `${JSON.stringify({ accessRequests: requests }, null, 2)}\n` };
  if (requests.length === 0) {
    return { stderr: `no ${status === 'all' ? '' : `${status} `}access requests${env ? ` for ${env}` : ''}\n` };
  }
  const now = Date.now();
  const rows = [
    ['ID', 'ENV', 'PERMISSION', 'STATUS', 'REQUESTER', 'TIME', 'REASON'],
    ...requests.map((r) => [
      r.id.slice(0, 8),
      r.env,
      r.permission,
      r.status,
      r.requesterName,
      standing(r, now),
      printable(r.reason.split('\n')[0] ?? ''),
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  const lines = rows.map((row) =>
    row
      .map((cell, c) => (c < row.length - 1 ? cell.padEnd(widths[c]!) : cell))
      .join('  ')
      .trimEnd(),
  );
  return { stdout: `${lines.join('\n')}\n` };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function withdraw(api: Api, project: string, given: string) {
  const { operations: ops } = await import('../schemas.js');
  let id = given.toLowerCase();
  if (!UUID.test(given)) {
    if (looksLikeToken(given) || !/^[0-9a-f-]{4,36}$/i.test(given)) {
      throw usageError(
        `${shown(given)} is not an access request id`,
        'give the id, or its first characters, as `svcenv access list` shows them',
      );
    }
    const matches = (await fetchAll(api, project)).filter((r) => r.id.startsWith(id));
    if (matches.length === 0) {
      throw new CliError('NOT_FOUND', `no access request ${shown(given)}`, 'list them with `svcenv access list`');
    }
    if (matches.length > 1) {
      throw usageError(
        `${shown(given)} names ${matches.length} access requests`,
        `give more of the id: ${matches.map((r) => r.id).join(', ')}`,
      );
    }
    id = matches[0]!.id;
  }
  const r = await api.json(ops.withdrawAccessRequest, { params: { id: project, requestId: id }, body: {} });
  return { stdout: `withdrew access request ${r.id} (${r.permission} on ${r.env})\n` };
}
