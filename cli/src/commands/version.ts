import type { Command } from '../command.js';

export const versionCommand: Command = {
  name: 'version',
  summary: 'Print the version',
  usage: 'svcenv version',
  flags: {},
  async run(_args, ctx) {
    return { stdout: `svcenv ${ctx.version}\n` };
  },
};
