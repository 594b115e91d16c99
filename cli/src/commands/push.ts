import { Api, pathOf } from '../api.js';
import { type Command, targetFlags } from '../command.js';
import { requireTarget, requireToken, resolveSettings } from '../config.js';
import { readDotenvFile } from '../localfile.js';
import { CONTEXT_KEYS } from '../remote.js';

export const pushCommand: Command = {
  name: 'push',
  summary: 'Upsert the variables of a local dotenv file (keys absent from the file are left alone)',
  usage: 'svcenv push [--project <id>] [--env <name>] [--file <path>] [--dry-run]',
  flags: {
    ...targetFlags,
    file: { type: 'string', description: 'dotenv file to read (default: .env)' },
    'dry-run': { type: 'boolean', description: 'print the keys that would be sent; no API call' },
  },
  details:
    'Needs a write-scope token. New keys are created as secret; existing keys keep their type.\n' +
    'The context variables SVCENV_PROJECT, SVCENV_ENV and SVCENV_PROJECT_NAME that pull adds are never pushed.',
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
    const { bulkUpsertResponse, listVarsResponse, MAX_BULK_ITEMS } = await import('../schemas.js');
    if (vars.size === 0) return { stdout: '0 created, 0 updated\n', stderr: note };
    // The masked listing (read permission) tells which keys are plain, so push never flips a type.
    const { vars: remote } = await api.json(listVarsResponse, pathOf.vars(project, env));
    const types = new Map(remote.map((v) => [v.key, v.type]));
    const items = [...vars].map(([key, value]) => ({ key, value, type: types.get(key) ?? 'secret' }));
    let created = 0;
    let updated = 0;
    for (let i = 0; i < items.length; i += MAX_BULK_ITEMS) {
      const res = await api.json(bulkUpsertResponse, pathOf.bulkUpsert(project), {
        method: 'POST',
        body: { envs: [env], items: items.slice(i, i + MAX_BULK_ITEMS) },
      });
      created += res.created.length;
      updated += res.updated.length;
    }
    return { stdout: `${created} created, ${updated} updated\n`, stderr: note };
  },
};
