import { Api } from '../api.js';
import { type Command, settingFlags, targetFlags } from '../command.js';
import { requireTarget, requireToken, resolveSettings } from '../config.js';
import { readDotenvFile } from '../localfile.js';
import { CONTEXT_KEYS } from '../remote.js';
import { allowUnresolvedFlag, explainUnresolved, validateQuery } from '../unresolved.js';
import {
  approvalRequired,
  type Changes,
  confirmProtected,
  defaultMessage,
  describeChanges,
  envFlags,
  openChangeRequest,
  writeFlags,
} from '../writes.js';

export const pushCommand: Command = {
  name: 'push',
  summary: 'Upsert the variables of a local dotenv file (keys absent from the file are left alone)',
  usage:
    'svcenv push [--project <id|slug>] [--env <name>] [--file <path>] [--dry-run] [--allow-unresolved] [--yes] [--message <text>]',
  flags: {
    ...targetFlags,
    file: { type: 'string', description: 'dotenv file to read (default: .env)' },
    'dry-run': { type: 'boolean', description: 'print the keys that would be sent; no API call' },
    ...allowUnresolvedFlag,
    ...writeFlags,
  },
  details:
    'Needs a write-scope token. New keys are created as secret; existing keys keep their type.\n' +
    'Only real changes are sent: a key whose value equals the stored text or the resolved value on the\n' +
    'server is left alone, so pushing back a pulled file changes nothing and keeps references.\n' +
    'The context variables SVCENV_PROJECT, SVCENV_ENV and SVCENV_PROJECT_NAME that pull adds are never pushed.\n' +
    'The server checks ${...} references first: if a value sent names an environment that does not\n' +
    'exist or that the token cannot read, a missing key without a fallback, or makes a cycle, nothing is\n' +
    'saved and each such key is printed with what is wrong (exit 1); --allow-unresolved saves anyway.\n' +
    'Output: "<n> created, <m> updated", then the keys created and the keys updated (never values).\n' +
    'A protected environment (prod by default): the keys that would change are shown and you are asked to\n' +
    'confirm; --yes (-y) skips the question, and without a terminal push refuses unless --yes is given.\n' +
    'An environment that requires approval: the changes are opened as a change request instead (message:\n' +
    '--message, or the keys); push prints its id and its page in the dashboard, where an Owner or project\n' +
    'Admin approves it (see `svcenv requests`). Nothing changes until then.',
  async run(args, ctx) {
    const file = (args.flags.file as string | undefined) || '.env';
    const vars = readDotenvFile(ctx.cwd, file);
    const skipped = [...vars.keys()].filter((k) => CONTEXT_KEYS.has(k));
    for (const k of skipped) vars.delete(k);
    const note = skipped.length ? `skipped context variables: ${skipped.join(', ')}\n` : '';
    if (args.flags['dry-run']) {
      const keys = [...vars.keys()];
      return {
        stdout: `${keys.map((k) => `${k}\n`).join('')}${keys.length} keys would be sent (dry run)\n`,
        stderr: note,
      };
    }
    const settings = resolveSettings(settingFlags(args), ctx.env, ctx.cwd);
    const target = requireTarget(settings);
    const { project, env } = target;
    const token = requireToken(settings);
    const api = new Api(settings.apiUrl, token);
    const { operations: ops, MAX_BULK_ITEMS } = await import('../schemas.js');
    if (vars.size === 0) return { stdout: '0 created, 0 updated\n', stderr: note };
    // D56: compare with the stored text and the resolved value of every key (a plaintext listing, which
    // push's write permission allows), and send only keys that differ from both. A pulled file holds
    // resolved values: sending them back would replace `${DB_PASSWORD}` with the password itself (in a
    // plain variable, in clear for every reader of the masked listing) and add a history entry per key.
    // The environment's flags (protected, requireApproval) are read at the same time.
    const [listing, flags] = await Promise.all([
      api.jsonWithHeaders(ops.listVars, { params: { id: project, env }, query: { reveal: 'true' } }),
      envFlags(api, target),
    ]);
    const remote = listing.body.vars;
    // D46: the writes are sent against the revision that was compared (If-Match), so a change made on the
    // server in between is reported (PRECONDITION_FAILED, exit 1), never overwritten. A server without
    // revisions sends no header, and push then writes unconditionally as before.
    let revision = listing.headers.get('x-svcenv-revision');
    const byKey = new Map(remote.map((v) => [v.key, v]));
    // Existing keys keep their type; new keys are created secret.
    const items = [...vars]
      .filter(([key, value]) => {
        const known = byKey.get(key);
        return !known || (value !== known.value && value !== resolvedText(known));
      })
      .map(([key, value]) => ({ key, value, type: byKey.get(key)?.type ?? 'secret' }));
    const planned: Changes = {
      created: items.filter((i) => !byKey.has(i.key)).map((i) => i.key),
      updated: items.filter((i) => byKey.has(i.key)).map((i) => i.key),
      deleted: [],
    };
    await confirmProtected(flags, target, planned, { yes: args.flags.yes === true, token, what: 'this push' });
    const created: string[] = [];
    const updated: string[] = [];
    for (let i = 0; i < items.length; i += MAX_BULK_ITEMS) {
      let res: { created: string[]; updated: string[] };
      let headers: Headers;
      try {
        ({ body: res, headers } = await api.jsonWithHeaders(ops.bulkUpsert, {
          params: { id: project },
          body: { envs: [env], items: items.slice(i, i + MAX_BULK_ITEMS) },
          ...(revision ? { headers: { 'if-match': `"rev:${revision}"` } } : {}),
          ...validateQuery(args.flags),
        }));
      } catch (err) {
        // D47: nothing was written (an environment that requires approval refuses every batch): the same
        // changes become one change request, for an Owner or project Admin to approve.
        if (!approvalRequired(err) || created.length + updated.length > 0) throw explainUnresolved(err);
        const message = nonEmpty(args.flags.message) ?? defaultMessage(`svcenv push of ${file}`, planned);
        const opened = await openChangeRequest(api, target, { set: items, delete: [], message }, planned, {
          revision,
          flags: args.flags,
        });
        return { stdout: `0 created, 0 updated\n${opened}`, stderr: note };
      }
      created.push(...res.created);
      updated.push(...res.updated);
      // A file of more than one batch: the next batch builds on the revision this one made.
      revision = headers.get('x-svcenv-revision') ?? revision;
    }
    // The specification's summary line as it is, then the keys (never values) for a person to check.
    const named = describeChanges({ created, updated, deleted: [] }, '\n');
    return {
      stdout: `${created.length} created, ${updated.length} updated\n${named ? `${named}\n` : ''}`,
      stderr: note,
    };
  },
};

const nonEmpty = (v: string | boolean | undefined): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v : undefined;

/**
 * The value a pull writes for a listed variable: its `resolvedValue` when it holds a reference (spec
 * variables rule 2), else its text with each escaped `$${` read as a literal `${` (D25), as the server's
 * resolver reads it from left to right.
 */
function resolvedText(v: { value: string; resolvedValue?: string | undefined }): string {
  return v.resolvedValue ?? v.value.replaceAll('$${', '${');
}
