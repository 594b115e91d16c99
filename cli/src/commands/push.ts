import { Api } from '../api.js';
import { type Command, targetFlags } from '../command.js';
import { requireTarget, requireToken, resolveSettings } from '../config.js';
import { readDotenvFile } from '../localfile.js';
import { CONTEXT_KEYS } from '../remote.js';
import { allowUnresolvedFlag, explainUnresolved, validateQuery } from '../unresolved.js';

export const pushCommand: Command = {
  name: 'push',
  summary: 'Upsert the variables of a local dotenv file (keys absent from the file are left alone)',
  usage: 'svcenv push [--project <id|slug>] [--env <name>] [--file <path>] [--dry-run] [--allow-unresolved]',
  flags: {
    ...targetFlags,
    file: { type: 'string', description: 'dotenv file to read (default: .env)' },
    'dry-run': { type: 'boolean', description: 'print the keys that would be sent; no API call' },
    ...allowUnresolvedFlag,
  },
  details:
    'Needs a write-scope token. New keys are created as secret; existing keys keep their type.\n' +
    'Only real changes are sent: a key whose value equals the stored text or the resolved value on the\n' +
    'server is left alone, so pushing back a pulled file changes nothing and keeps references.\n' +
    'The context variables SVCENV_PROJECT, SVCENV_ENV and SVCENV_PROJECT_NAME that pull adds are never pushed.\n' +
    'The server checks ${...} references first: if a value sent names an environment that does not\n' +
    'exist or that the token cannot read, a missing key without a fallback, or makes a cycle, nothing is\n' +
    'saved and each such key is printed with what is wrong (exit 1); --allow-unresolved saves anyway.',
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
    const settings = resolveSettings({ project: args.flags.project, env: args.flags.env }, ctx.env);
    const { project, env } = requireTarget(settings);
    const api = new Api(settings.apiUrl, requireToken(settings));
    const { operations: ops, MAX_BULK_ITEMS } = await import('../schemas.js');
    if (vars.size === 0) return { stdout: '0 created, 0 updated\n', stderr: note };
    // D56: compare with the stored text and the resolved value of every key (a plaintext listing, which
    // push's write permission allows), and send only keys that differ from both. A pulled file holds
    // resolved values: sending them back would replace `${DB_PASSWORD}` with the password itself (in a
    // plain variable, in clear for every reader of the masked listing) and add a history entry per key.
    const listing = await api.jsonWithHeaders(ops.listVars, {
      params: { id: project, env },
      query: { reveal: 'true' },
    });
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
    let created = 0;
    let updated = 0;
    for (let i = 0; i < items.length; i += MAX_BULK_ITEMS) {
      const { body: res, headers } = await api
        .jsonWithHeaders(ops.bulkUpsert, {
          params: { id: project },
          body: { envs: [env], items: items.slice(i, i + MAX_BULK_ITEMS) },
          ...(revision ? { headers: { 'if-match': `"rev:${revision}"` } } : {}),
          ...validateQuery(args.flags),
        })
        .catch((err: unknown) => {
          throw explainUnresolved(err);
        });
      created += res.created.length;
      updated += res.updated.length;
      // A file of more than one batch: the next batch builds on the revision this one made.
      revision = headers.get('x-svcenv-revision') ?? revision;
    }
    return { stdout: `${created} created, ${updated} updated\n`, stderr: note };
  },
};

/**
 * The value a pull writes for a listed variable: its `resolvedValue` when it holds a reference (spec
 * variables rule 2), else its text with each escaped `$${` read as a literal `${` (D25), as the server's
 * resolver reads it from left to right.
 */
function resolvedText(v: { value: string; resolvedValue?: string | undefined }): string {
  return v.resolvedValue ?? v.value.replaceAll('$${', '${');
}
