import { endpoints } from '@svcenv/contract/endpoints';
import { Api, ApiError } from '../api.js';
import type { Parsed } from '../args.js';
import { type Command, settingFlags, targetFlags } from '../command.js';
import { requireTarget, requireToken, resolveSettings } from '../config.js';
import { CliError, closest, looksLikeToken, shown, usageError } from '../errors.js';
import { pullVars } from '../remote.js';
import { allowUnresolvedFlag, explainUnresolved, validateQuery } from '../unresolved.js';
import {
  approvalRequired,
  type Changes,
  confirmProtected,
  defaultMessage,
  envFlags,
  openChangeRequest,
  writeFlags,
} from '../writes.js';

const SUBCOMMANDS = ['get', 'set', 'unset'] as const;
type Sub = 'list' | (typeof SUBCOMMANDS)[number];

/** Which flags each subcommand takes beyond --project/--env (a flag that would be ignored is an error). */
const SUB_FLAGS: Record<Sub, readonly string[]> = {
  list: ['reveal', 'personal'],
  get: [],
  set: ['secret', 'plain', 'allow-unresolved', 'yes', 'message', 'personal'],
  unset: ['yes', 'message', 'personal'],
};

/** D75: with --personal, list, set and unset act on the caller's own overrides; these flags then do not apply. */
const NOT_PERSONAL = ['secret', 'plain', 'allow-unresolved', 'yes', 'message'];

/**
 * D59: one environment's variables, one at a time. Listing is masked (`--reveal` needs a write token, as
 * in the dashboard); `get` prints one resolved value through pull (a read token suffices); `set` and
 * `unset` write through the bulk endpoints against the revision they read (If-Match, D46), so a change
 * made in between is refused (PRECONDITION_FAILED), never overwritten. Refusals exit 1 with the API's
 * code (FORBIDDEN for a read token). Under D47 a write refused with APPROVAL_REQUIRED is opened as a change
 * request; a protected environment's changes are confirmed first (writes.ts, ADR 0028). `--personal` (D75,
 * ADR 0031): the caller's own overrides of the environment's keys, through the overrides endpoints.
 */
export const varsCommand: Command = {
  name: 'vars',
  summary: "List, read, set and delete an environment's variables",
  usage:
    'svcenv vars [--reveal] [--personal] | vars get KEY | vars set KEY=VALUE... [--secret|--plain] [--allow-unresolved] [--yes] [--message <text>] | vars set --personal KEY=VALUE... | vars unset [--personal] KEY... [--yes] [--message <text>] [--project <id|slug>] [--env <name>]',
  flags: {
    ...targetFlags,
    reveal: { type: 'boolean', description: 'list: show values in clear (needs a write-scope token)' },
    secret: { type: 'boolean', description: 'set: store the values as secret (the default for new keys)' },
    plain: { type: 'boolean', description: 'set: store the values as plain' },
    personal: {
      type: 'boolean',
      description: 'list, set, unset: your own overrides of the shared values (unprotected environments only)',
    },
    ...allowUnresolvedFlag,
    ...writeFlags,
  },
  positionals: SUBCOMMANDS,
  details:
    'svcenv vars               KEY, TYPE and VALUE of every variable, secrets masked; TYPE\n' +
    '                          "secret, personal" or "plain, personal": the value is your own (--personal)\n' +
    'svcenv vars get KEY       the resolved value alone, followed by one newline (exit 1 when absent)\n' +
    'svcenv vars set K=V...    create or update; existing keys keep their type unless --secret/--plain\n' +
    'svcenv vars unset K...    delete\n' +
    'A value on the command line is visible to other users of this machine (`ps`) and stays in the shell\n' +
    'history: `svcenv vars set KEY=-` reads the value from standard input instead (one trailing newline\n' +
    'is dropped), e.g. `svcenv vars set DB_PASSWORD=- < password.txt`.\n' +
    'set and unset need a write-scope token and send the revision they read (If-Match): if the environment\n' +
    'changed in between, nothing is written (PRECONDITION_FAILED); run the command again.\n' +
    'set checks ${...} references first: a value naming an environment that does not exist or that\n' +
    'the token cannot read, a missing key without a fallback (${KEY:-default}), or a cycle is refused, each\n' +
    'key printed with what is wrong, nothing saved (exit 1); --allow-unresolved saves it anyway.\n' +
    'A protected environment (prod by default): set and unset show the keys they change and ask to confirm;\n' +
    '--yes (-y) skips the question, and without a terminal they refuse unless --yes is given.\n' +
    'An environment that requires approval: set and unset open a change request with the same changes\n' +
    '(--message, or the keys), print its id and its page in the dashboard; see `svcenv requests`.\n' +
    '--personal: your own values of existing keys in an unprotected environment, applied to your pulls,\n' +
    "`svcenv run` and your dashboard only (tokens you created), nobody else's; `vars --personal` lists\n" +
    'them (masked unless --reveal; ORPHANED: the key no longer exists, never applied), `vars set --personal\n' +
    'K=V` sets one, `vars unset --personal K` removes it. Needs write permission on the environment.',
  async run(args, ctx) {
    const [first, ...operands] = args.positionals;
    const sub = subcommand(first);
    for (const flag of ['reveal', 'secret', 'plain', 'allow-unresolved', 'yes', 'message', 'personal']) {
      if (args.flags[flag] && !SUB_FLAGS[sub].includes(flag)) {
        throw usageError(
          `--${flag} does not apply to \`vars${sub === 'list' ? '' : ` ${sub}`}\``,
          'see: svcenv vars --help',
        );
      }
    }
    const personal = args.flags.personal === true;
    if (personal) {
      const other = NOT_PERSONAL.find((f) => args.flags[f]);
      if (other) throw usageError(`--${other} does not apply with --personal`, 'see: svcenv vars --help');
    }
    const settings = resolveSettings(settingFlags(args), ctx.env, ctx.cwd);
    const target = requireTarget(settings);
    const token = requireToken(settings);
    const api = new Api(settings.apiUrl, token);
    const write = { token, yes: args.flags.yes === true, message: args.flags.message, flags: args.flags };
    if (personal && sub !== 'get') {
      if (sub === 'list') {
        if (operands.length) throw usageError('`vars --personal` takes no arguments', 'svcenv vars --personal');
        return listPersonal(api, target, args.flags.reveal === true);
      }
      if (sub === 'set') return setPersonal(api, target, operands, ctx.tokenFromStdin === true);
      return unsetPersonal(api, target, operands);
    }
    switch (sub) {
      case 'list':
        if (operands.length) throw usageError('`vars` takes no arguments', 'svcenv vars get KEY');
        return list(api, target, args.flags.reveal === true);
      case 'get':
        if (operands.length !== 1) throw usageError('`vars get` takes exactly one KEY', 'svcenv vars get KEY');
        return get(api, target, operands[0]!);
      case 'set':
        return set(api, target, args, operands, write, ctx.tokenFromStdin === true);
      case 'unset':
        return unset(api, target, operands, write);
    }
  },
};

function subcommand(word: string | undefined): Sub {
  if (word === undefined) return 'list';
  if ((SUBCOMMANDS as readonly string[]).includes(word)) return word as Sub;
  const guess = closest(word, SUBCOMMANDS);
  throw usageError(
    `unknown vars command ${shown(word)}`,
    guess ? `did you mean \`svcenv vars ${guess}\`?` : 'use `svcenv vars`, `vars get`, `vars set` or `vars unset`',
  );
}

type Target = { project: string; env: string };

async function listing(api: Api, t: Target, reveal = false) {
  const { operations: ops } = await import('../schemas.js');
  const { body, headers } = await api.jsonWithHeaders(ops.listVars, {
    params: { id: t.project, env: t.env },
    ...(reveal ? { query: { reveal: 'true' } } : {}),
  });
  return { vars: body.vars, revision: headers.get('x-svcenv-revision') };
}

/** D46: the revision that was read; a server without revisions sends none, and the write is unconditional. */
const ifMatch = (revision: string | null) => (revision ? { headers: { 'if-match': `"rev:${revision}"` } } : {});

async function list(api: Api, t: Target, reveal: boolean) {
  const { vars } = await listing(api, t, reveal);
  const rows = [
    ['KEY', 'TYPE', 'VALUE'],
    // D75: a key shown with one's own value says so in its TYPE cell ("secret, personal"), as the dashboard marks
    // it; `svcenv vars --personal` lists those values themselves.
    ...vars.map((v) => [
      v.key,
      v.overridden ? `${v.type}, personal` : v.type,
      v.valueError ? '(cannot be decrypted)' : printable(v.value),
    ]),
  ];
  const widths = [0, 1].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
  return {
    stdout: `${rows.map((r) => `${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]}`.trimEnd()).join('\n')}\n`,
  };
}

/** One row per variable: line breaks and other control characters are shown escaped. */
export function printable(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: exactly the characters that would break a row
  return value.replace(/[\u0000-\u001f\u007f]/g, (c) =>
    c === '\n'
      ? '\\n'
      : c === '\r'
        ? '\\r'
        : c === '\t'
          ? '\\t'
          : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/**
 * The resolved value, as `pull` would write it (spec variables rule 2), read through pull so that a read
 * token can use it; the context variables pull adds are not variables and are left out.
 */
async function get(api: Api, t: Target, key: string) {
  const value = (await pullVars(api, { ...t, metadata: false })).get(key);
  if (value === undefined) {
    throw new CliError('NOT_FOUND', `no variable ${shown(key)} in ${t.env}`, 'list the keys with `svcenv vars`');
  }
  return { stdout: `${value}\n` };
}

/** What set and unset need to write: the token (a dashboard session may skip approval), --yes, --message. */
interface WriteOptions {
  token: string;
  yes: boolean;
  message: string | boolean | undefined;
  flags: Parsed['flags'];
}

const messageOf = (o: WriteOptions, what: string, changes: Changes) =>
  typeof o.message === 'string' && o.message.trim() !== '' ? o.message : defaultMessage(what, changes);

/** D75: KEY=VALUE operands (one `KEY=-` reads standard input), each key once. */
async function keyValues(operands: string[], stdinTaken: boolean, usage: string): Promise<Map<string, string>> {
  if (operands.length === 0)
    throw usageError(`\`${usage}\` needs KEY=VALUE`, `${usage} KEY=VALUE (or KEY=- to read stdin)`);
  const values = new Map<string, string>();
  let fromStdin = false;
  for (const [i, operand] of operands.entries()) {
    const eq = operand.indexOf('=');
    // The argument is not repeated: it may be a value typed without its key.
    if (eq <= 0) throw usageError(`argument ${i + 1} after \`set\` is not KEY=VALUE`, `${usage} KEY=VALUE`);
    const key = operand.slice(0, eq);
    if (values.has(key)) throw usageError(`${shown(key)} is given twice`);
    let value = operand.slice(eq + 1);
    if (value === '-') {
      if (fromStdin) throw usageError('only one KEY=- can read standard input');
      if (stdinTaken) {
        throw usageError(
          '--token - has read standard input already: KEY=- cannot read it too',
          'pass the token with SVCENV_TOKEN or `svcenv login`',
        );
      }
      fromStdin = true;
      value = await readStdin();
    }
    values.set(key, value);
  }
  return values;
}

/** D75: the caller's own overrides, KEY, ORPHANED and VALUE (masked unless --reveal, which needs write). */
async function listPersonal(api: Api, t: Target, reveal: boolean) {
  const { operations: ops } = await import('../schemas.js');
  const { overrides } = await api.json(ops.listOverrides, {
    params: { id: t.project, env: t.env },
    ...(reveal ? { query: { reveal: 'true' } } : {}),
  });
  if (overrides.length === 0) return { stdout: `no personal overrides in ${t.env}\n` };
  const rows = [
    ['KEY', 'ORPHANED', 'VALUE'],
    ...overrides.map((o) => [o.key, o.orphaned ? 'yes' : 'no', printable(o.value)]),
  ];
  const widths = [0, 1].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
  return {
    stdout: `${rows.map((r) => `${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]}`.trimEnd()).join('\n')}\n`,
  };
}

/** D75: sets each override through PUT; the shared values, revisions and history are untouched. */
async function setPersonal(api: Api, t: Target, operands: string[], stdinTaken: boolean) {
  const values = await keyValues(operands, stdinTaken, 'svcenv vars set --personal');
  const { operations: ops } = await import('../schemas.js');
  const lines: string[] = [];
  for (const [key, value] of values) {
    const o = await api
      .json(ops.putOverride, { params: { id: t.project, env: t.env, key }, body: { value } })
      .catch((err: unknown) => {
        // The generic FORBIDDEN hint is about token scope; a protected environment refuses everyone (ADR 0031).
        if (err instanceof ApiError && err.code === 'FORBIDDEN' && /protected/.test(err.message)) {
          throw new ApiError(
            err.status,
            err.code,
            err.message,
            `personal values exist only in unprotected environments; a change of ${t.env}'s shared value is \`svcenv vars set\` without --personal`,
          );
        }
        throw err;
      });
    lines.push(
      `set personal ${key}${o.orphaned ? ' (orphaned: no such variable in this environment, not applied)' : ''}`,
    );
  }
  return { stdout: lines.map((l) => `${l}\n`).join('') };
}

/** D75: removes each override (the shared value applies again). */
async function unsetPersonal(api: Api, t: Target, keys: string[]) {
  if (keys.length === 0) {
    throw usageError('`vars unset --personal` needs at least one KEY', 'svcenv vars unset --personal KEY');
  }
  const lines: string[] = [];
  for (const key of new Set(keys)) {
    await api.fetch(endpoints.deleteOverride, { params: { id: t.project, env: t.env, key } });
    lines.push(`removed personal ${key}`);
  }
  return { stdout: lines.map((l) => `${l}\n`).join('') };
}

async function set(api: Api, t: Target, args: Parsed, operands: string[], o: WriteOptions, stdinTaken: boolean) {
  if (args.flags.secret && args.flags.plain) throw usageError('--secret and --plain are mutually exclusive');
  if (operands.length === 0)
    throw usageError('`vars set` needs KEY=VALUE', 'svcenv vars set KEY=VALUE (or KEY=- to read stdin)');
  const values = new Map<string, string>();
  let fromStdin: string | undefined;
  for (const [i, operand] of operands.entries()) {
    const eq = operand.indexOf('=');
    // The argument is not repeated: it may be a value typed without its key.
    if (eq <= 0) throw usageError(`argument ${i + 1} after \`set\` is not KEY=VALUE`, 'svcenv vars set KEY=VALUE');
    const key = operand.slice(0, eq);
    if (values.has(key)) throw usageError(`${shown(key)} is given twice`);
    let value = operand.slice(eq + 1);
    if (value === '-') {
      if (fromStdin !== undefined) throw usageError('only one KEY=- can read standard input');
      if (stdinTaken) {
        throw usageError(
          '--token - has read standard input already: KEY=- cannot read it too',
          'pass the token with SVCENV_TOKEN or `svcenv login`',
        );
      }
      fromStdin = key;
      value = await readStdin();
    }
    values.set(key, value);
  }
  const flagType = args.flags.secret ? 'secret' : args.flags.plain ? 'plain' : undefined;
  const [{ vars, revision }, flags] = await Promise.all([listing(api, t), envFlags(api, t)]);
  const types = new Map(vars.map((v) => [v.key, v.type]));
  const items = [...values].map(([key, value]) => ({ key, value, type: flagType ?? types.get(key) ?? 'secret' }));
  const planned: Changes = {
    created: items.filter((i) => !types.has(i.key)).map((i) => i.key),
    updated: items.filter((i) => types.has(i.key)).map((i) => i.key),
    deleted: [],
  };
  await confirmProtected(flags, t, planned, { yes: o.yes, token: o.token, what: 'this command' });
  const { operations: ops } = await import('../schemas.js');
  const typeOf = new Map(items.map((i) => [i.key, i.type]));
  let res: { created: string[]; updated: string[] };
  try {
    res = await api.json(ops.bulkUpsert, {
      params: { id: t.project },
      body: { envs: [t.env], items },
      ...ifMatch(revision),
      ...validateQuery(args.flags),
    });
  } catch (err) {
    if (!approvalRequired(err)) throw explainUnresolved(err);
    const message = messageOf(o, 'svcenv vars set', planned);
    return {
      stdout: await openChangeRequest(api, t, { set: items, delete: [], message }, planned, {
        revision,
        flags: o.flags,
      }),
    };
  }
  const lines = [
    ...res.created.map((k) => `created ${k} (${typeOf.get(k)})`),
    ...res.updated.map((k) => `updated ${k} (${typeOf.get(k)})`),
  ];
  return { stdout: lines.map((l) => `${l}\n`).join('') };
}

async function unset(api: Api, t: Target, keys: string[], o: WriteOptions) {
  if (keys.length === 0) throw usageError('`vars unset` needs at least one KEY', 'svcenv vars unset KEY');
  const [{ vars, revision }, flags] = await Promise.all([listing(api, t), envFlags(api, t)]);
  const present = new Set(vars.map((v) => v.key));
  const known = [...new Set(keys)].filter((k) => present.has(k));
  const absent = [...new Set(keys)].filter((k) => !present.has(k));
  const named = absent.map((k) => (looksLikeToken(k) ? '(a token-shaped argument)' : k));
  const note = absent.length ? `not set in ${t.env}, nothing to delete: ${named.join(', ')}\n` : '';
  // Only keys that exist are sent: the If-Match revision covers the listing they were read from, so a key
  // created in between makes the request fail rather than be deleted unseen.
  if (known.length === 0) return { stdout: '', stderr: note };
  const planned: Changes = { created: [], updated: [], deleted: known };
  await confirmProtected(flags, t, planned, { yes: o.yes, token: o.token, what: 'this command' });
  const { operations: ops } = await import('../schemas.js');
  try {
    await api.json(ops.bulkDelete, {
      params: { id: t.project, env: t.env },
      body: { keys: known },
      ...ifMatch(revision),
    });
  } catch (err) {
    if (!approvalRequired(err)) throw err;
    const message = messageOf(o, 'svcenv vars unset', planned);
    const opened = await openChangeRequest(api, t, { set: [], delete: known, message }, planned, {
      revision,
      flags: { 'allow-unresolved': true },
    });
    return { stdout: opened, stderr: note };
  }
  return { stdout: `deleted ${known.join(', ')}\n`, stderr: note };
}

/** `KEY=-`: the value from standard input, keeping it out of `ps` and shell history; one final newline is dropped. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}
