import { Api } from '../api.js';
import { type Command, settingFlags } from '../command.js';
import { requireToken, resolveSettings } from '../config.js';

export const projectsCommand: Command = {
  name: 'projects',
  summary: 'List the id, slug, name and environments of every project the token can see',
  usage: 'svcenv projects',
  flags: {},
  async run(args, ctx) {
    const settings = resolveSettings(settingFlags(args), ctx.env, ctx.cwd);
    const api = new Api(settings.apiUrl, requireToken(settings));
    const { operations: ops } = await import('../schemas.js');
    const { projects } = await api.json(ops.listProjects);
    // D48: the slug is what --project and .svcenv.json take as readily as the id (D58).
    const rows = [['ID', 'SLUG', 'NAME', 'ENVS'], ...projects.map((p) => [p.id, p.slug, p.name, p.envs.join(',')])];
    const widths = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
    const lines = rows.map((r) =>
      r
        .map((cell, c) => (c < widths.length ? cell.padEnd(widths[c]!) : cell))
        .join('  ')
        .trimEnd(),
    );
    return { stdout: `${lines.join('\n')}\n` };
  },
};
