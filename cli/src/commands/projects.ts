import { Api, pathOf } from '../api.js';
import type { Command } from '../command.js';
import { requireToken, resolveSettings } from '../config.js';

export const projectsCommand: Command = {
  name: 'projects',
  summary: 'List the id, name and environments of every project the token can see',
  usage: 'svcenv projects',
  flags: {},
  async run(_args, ctx) {
    const settings = resolveSettings({}, ctx.env);
    const api = new Api(settings.apiUrl, requireToken(settings));
    const { projectList } = await import('../schemas.js');
    const { projects } = await api.json(projectList, pathOf.projects());
    const rows = [['ID', 'NAME', 'ENVS'], ...projects.map((p) => [p.id, p.name, p.envs.join(',')])];
    const widths = [0, 1].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
    const lines = rows.map((r) => `${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]}`.trimEnd());
    return { stdout: `${lines.join('\n')}\n` };
  },
};
