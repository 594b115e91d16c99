import { Api } from '../api.js';
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
  list: ['reveal'],
  get: [],
  set: ['secret', 'plain', 'allow-unresolved', 'yes', 'message'],
  unset: ['yes', 'message'],
};

/**
 * D59: one environment's variables, one at a time. Listing is masked (`--reveal` needs a write token, as
 * in the dashboard); `get` prints one resolved value through pull (a read token suffices); `set` and
 * `unset` write through the bulk endpoints against the revision they read (If-Match, D46), so a change
 * made in between is refused (PRECONDITION_FAILED), never overwritten. Refusals exit 1 with the API's
 * code (FORBIDDEN for a read token). Under D47 a write refused with APPROVAL_REQUIRED is opened as a change
 * request; a protected environment's changes are confirmed first (writes.ts, ADR 0028).
 */
export const varsCommand: Command = {
  name: 'vars',
  summary: "List, read, set and delete an environment's variables",
  usage:
    'svcenv vars [--reveal] | vars get KEY | vars set KEY=VALUE... [--secret|--plain] [--allow-unresolved] [--yes] [--message <text>] | vars unset KEY... [--yes] [--message <text>] [--project <id|slug>] [--env <name>]',
  flags: {
    ...targetFlags,
    reveal: { type: 'boolean', description: 'list: show values in clear (needs a write-scope token)' },
    secret: { type: 'boolean', description: 'set: store the values as secret (the default for new keys)' },
    plain: { type: 'boolean', description: 'set: store the values as plain' },
    ...allowUnresolvedFlag,
    ...writeFlags,
  },
  positionals: SUBCOMMANDS,
  details:
    'svcenv vars               KEY, TYPE and VALUE of every variable, secrets masked\n' +
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
    '(--message, or the keys), print its id and its page in the dashboard; see `svcenv requests`.',
  async run(args, ctx) {
    const [first, ...operands] = args.positionals;
    const sub = subcommand(first);
    for (const flag of ['reveal', 'secret', 'plain', 'allow-unresolved', 'yes', 'message']) {
      if (args.flags[flag] && !SUB_FLAGS[sub].includes(flag)) {
        throw usageError(
          `--${flag} does not apply to \`vars${sub === 'list' ? '' : ` ${sub}`}\``,
          'see: svcenv vars --help',
        );
      }
    }
    const settings = resolveSettings(settingFlags(args), ctx.env, ctx.cwd);
    const target = requireTarget(settings);
    const token = requireToken(settings);
    const api = new Api(settings.apiUrl, token);
    const write = { token, yes: args.flags.yes === true, message: args.flags.message, flags: args.flags };
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
    ...vars.map((v) => [v.key, v.type, v.valueError ? '(cannot be decrypted)' : printable(v.value)]),
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
