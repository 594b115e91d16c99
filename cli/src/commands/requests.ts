import { Api, ApiError } from '../api.js';
import type { Parsed } from '../args.js';
import { type Command, settingFlags, targetFlags } from '../command.js';
import { requireTarget, requireToken, resolveSettings } from '../config.js';
import { CliError, closest, looksLikeToken, shown, usageError } from '../errors.js';
import { keyList, requestsPage, type Target } from '../writes.js';
import { printable } from './vars.js';

const SUBCOMMANDS = ['show', 'approve', 'reject', 'withdraw'] as const;
type Sub = 'list' | (typeof SUBCOMMANDS)[number];
const STATUSES = ['open', 'applied', 'rejected', 'withdrawn', 'all'] as const;

/** Which flags each subcommand takes beyond --project/--env (a flag that would be ignored is an error). */
const SUB_FLAGS: Record<Sub, readonly string[]> = {
  list: ['status'],
  show: ['reveal'],
  approve: [],
  reject: ['reason'],
  withdraw: [],
};

/**
 * D47: the change requests of one environment. `requests` lists the open ones (or `--status`), `show` one
 * with its changes (secret values masked unless `--reveal`), `approve`, `reject` and `withdraw` close one.
 * A request is named by its id or the first characters of it, as the list shows them. Approving and
 * rejecting need a dashboard session (the server's rule: an approval is a person's decision, ADR 0013), so
 * with an access token they are refused FORBIDDEN, and the message says where to approve instead.
 */
export const requestsCommand: Command = {
  name: 'requests',
  summary: "List, show, approve, reject or withdraw an environment's change requests",
  usage:
    'svcenv requests [--status open|applied|rejected|withdrawn|all] | requests show ID [--reveal] | requests approve ID | requests reject ID [--reason <text>] | requests withdraw ID [--project <id|slug>] [--env <name>]',
  flags: {
    ...targetFlags,
    status: { type: 'string', description: `list: ${STATUSES.join(', ')} (default: open)` },
    reveal: { type: 'boolean', description: 'show: secret values in clear (needs a write-scope token)' },
    reason: { type: 'string', description: 'reject: the reason, sent to the author' },
  },
  positionals: SUBCOMMANDS,
  details:
    'svcenv requests               the open change requests of the environment, newest first\n' +
    'svcenv requests show ID       one request: status, author, message and each change (secrets masked)\n' +
    'svcenv requests approve ID    apply every change in one revision (an Owner or project Admin, not its author)\n' +
    'svcenv requests reject ID     close it unapplied, with --reason for its author\n' +
    'svcenv requests withdraw ID   close your own open request\n' +
    'ID is the id or its first characters (at least 4), as the list shows them. push and vars set/unset\n' +
    'open a request by themselves when the environment requires approval.\n' +
    "Approving and rejecting are a person's decision: the server takes them only from a dashboard session,\n" +
    'never from an access token, so with a token they are refused (FORBIDDEN) and the message gives the\n' +
    "request's page in the dashboard, where an Owner or project Admin approves it.",
  async run(args, ctx) {
    const [first, ...operands] = args.positionals;
    const sub = subcommand(first);
    for (const flag of ['status', 'reveal', 'reason']) {
      if (args.flags[flag] !== undefined && !SUB_FLAGS[sub].includes(flag)) {
        throw usageError(
          `--${flag} does not apply to \`requests${sub === 'list' ? '' : ` ${sub}`}\``,
          'see: svcenv requests --help',
        );
      }
    }
    if (sub === 'list' && operands.length) throw usageError('`requests` takes no arguments', 'svcenv requests show ID');
    if (sub !== 'list' && operands.length !== 1) {
      throw usageError(
        `\`requests ${sub}\` takes exactly one ID`,
        `svcenv requests ${sub} ID (see \`svcenv requests\`)`,
      );
    }
    const status = typeof args.flags.status === 'string' ? args.flags.status : 'open';
    if (!(STATUSES as readonly string[]).includes(status)) {
      throw usageError(`unknown --status ${shown(status)}`, `use one of: ${STATUSES.join(', ')}`);
    }
    const settings = resolveSettings(settingFlags(args), ctx.env, ctx.cwd);
    const target = requireTarget(settings);
    const api = new Api(settings.apiUrl, requireToken(settings));
    if (sub === 'list') return list(api, target, status as (typeof STATUSES)[number]);
    const id = await resolveId(api, target, operands[0]!);
    switch (sub) {
      case 'show':
        return show(api, target, id, args.flags.reveal === true);
      case 'approve':
      case 'reject':
        return decide(api, target, id, sub, args);
      case 'withdraw':
        return withdraw(api, target, id);
    }
  },
};

function subcommand(word: string | undefined): Sub {
  if (word === undefined) return 'list';
  if ((SUBCOMMANDS as readonly string[]).includes(word)) return word as Sub;
  const guess = closest(word, SUBCOMMANDS);
  throw usageError(
    `unknown requests command ${shown(word)}`,
    guess
      ? `did you mean \`svcenv requests ${guess}\`?`
      : 'use `svcenv requests`, `requests show`, `requests approve`, `requests reject` or `requests withdraw`',
  );
}

type Request = Awaited<ReturnType<typeof fetchAll>>[number];

async function fetchAll(api: Api, t: Target, status?: string) {
  const { operations: ops } = await import('../schemas.js');
  const query = status && status !== 'all' ? { status: status as 'open' } : {};
  return (await api.json(ops.listChangeRequests, { params: { id: t.project, env: t.env }, query })).changeRequests;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A full id as it is; a prefix (4+ hex characters or dashes) looked up among the environment's requests. */
async function resolveId(api: Api, t: Target, given: string): Promise<string> {
  if (UUID.test(given)) return given.toLowerCase();
  if (looksLikeToken(given) || !/^[0-9a-f-]{4,36}$/i.test(given)) {
    throw usageError(
      `${shown(given)} is not a change request id`,
      'give the id, or its first characters, as `svcenv requests` lists them',
    );
  }
  const prefix = given.toLowerCase();
  const matches = (await fetchAll(api, t)).filter((r) => r.id.startsWith(prefix));
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length === 0) {
    throw new CliError(
      'NOT_FOUND',
      `no change request ${shown(given)} in ${t.env}`,
      'list them with `svcenv requests --status all`',
    );
  }
  throw usageError(
    `${shown(given)} names ${matches.length} change requests in ${t.env}`,
    `give more of the id: ${matches.map((r) => r.id).join(', ')}`,
  );
}

/** `~DB_HOST, -OLD_KEY`: each change by key, a delete marked as in the dashboard. */
function changedKeys(r: Request): string {
  return keyList(
    r.changes.map((c) => (c.op === 'delete' ? `-${c.key}` : c.key)),
    6,
  );
}

const when = (iso: string) => iso.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, 'Z');

async function list(api: Api, t: Target, status: (typeof STATUSES)[number]) {
  const requests = await fetchAll(api, t, status);
  if (requests.length === 0) {
    return { stderr: `no ${status === 'all' ? '' : `${status} `}change requests in ${t.env}\n` };
  }
  const rows = [
    ['ID', 'STATUS', 'OPENED', 'AUTHOR', 'CHANGES', 'MESSAGE'],
    ...requests.map((r) => [
      r.id.slice(0, 8),
      r.status,
      when(r.createdAt),
      r.author,
      changedKeys(r),
      printable(r.message.split('\n')[0] ?? ''),
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  const lines = rows.map((row) =>
    row
      .map((cell, c) => (c < row.length - 1 ? cell.padEnd(widths[c]!) : cell))
      .join('  ')
      .trimEnd(),
  );
  return {
    stdout: `${lines.join('\n')}\n`,
    stderr: `in the dashboard: ${await requestsPage(api, t)}\n`,
  };
}

async function show(api: Api, t: Target, id: string, reveal: boolean) {
  const { operations: ops } = await import('../schemas.js');
  const r = await api.json(ops.getChangeRequest, {
    params: { id: t.project, env: t.env, requestId: id },
    ...(reveal ? { query: { reveal: 'true' } } : {}),
  });
  const rows: [string, string][] = [
    ['id', r.id],
    ['status', r.status],
    ['env', `${r.env} (opened at revision ${r.baseRevision})`],
    ['author', r.author],
    ['opened', r.createdAt],
  ];
  if (r.closedBy) rows.push(['closed', `${r.closedAt ?? ''} by ${r.closedBy}`.trim()]);
  if (r.appliedRevision !== undefined) rows.push(['applied', `revision ${r.appliedRevision}`]);
  if (r.reason) rows.push(['reason', printable(r.reason)]);
  rows.push(['message', printable(r.message)]);
  const width = Math.max(...rows.map(([k]) => k.length)) + 1;
  const keyWidth = Math.max(...r.changes.map((c) => c.key.length));
  const changes = r.changes.map((c) =>
    c.op === 'delete'
      ? `  delete  ${c.key}`
      : `  set     ${c.key.padEnd(keyWidth)}  ${c.type.padEnd(6)}  ${printable(c.value)}`,
  );
  return {
    stdout: `${rows.map(([k, v]) => `${`${k}:`.padEnd(width)} ${v}\n`).join('')}changes:\n${changes.join('\n')}\n`,
    stderr: `in the dashboard: ${await requestsPage(api, t)}\n`,
  };
}

/**
 * approve and reject: refused with an access token (the server's requireApprover), which the message says
 * plainly, with the page where an Owner or project Admin decides in the dashboard. Other refusals keep the
 * API's code, with what to do.
 */
async function decide(api: Api, t: Target, id: string, sub: 'approve' | 'reject', args: Parsed) {
  const { operations: ops } = await import('../schemas.js');
  const params = { id: t.project, env: t.env, requestId: id };
  try {
    if (sub === 'approve') {
      const r = await api.json(ops.approveChangeRequest, { params });
      return {
        stdout: `approved change request ${r.id}: applied to ${t.env} as revision ${r.appliedRevision ?? '?'}\n`,
      };
    }
    const reason = typeof args.flags.reason === 'string' ? args.flags.reason : undefined;
    const r = await api.json(ops.rejectChangeRequest, { params, body: reason ? { reason } : {} });
    return { stdout: `rejected change request ${r.id}\n` };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const page = await requestsPage(api, t);
    const verb = sub === 'approve' ? 'approving' : 'rejecting';
    if (err.code === 'FORBIDDEN' && /dashboard session/.test(err.message)) {
      throw new CliError(
        err.code,
        `${verb} a change request needs a dashboard session: it is a person's decision, which an access token cannot make`,
        `an Owner or project Admin ${sub}s it in the dashboard: ${page}`,
      );
    }
    if (err.code === 'FORBIDDEN' && /author/.test(err.message)) {
      throw new CliError(
        err.code,
        err.message.replace(/ \(DELETE\)/, ''),
        sub === 'reject'
          ? `withdraw it: svcenv requests withdraw ${id.slice(0, 8)}`
          : `another approver decides: ${page}`,
      );
    }
    if (err.code === 'CONFLICT') throw new CliError(err.code, err.message, `see it in the dashboard: ${page}`);
    throw err;
  }
}

async function withdraw(api: Api, t: Target, id: string) {
  const { operations: ops } = await import('../schemas.js');
  await api.fetch(ops.withdrawChangeRequest, { params: { id: t.project, env: t.env, requestId: id } });
  return { stdout: `withdrew change request ${id}\n` };
}
