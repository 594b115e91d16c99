import type { Command } from '../command.js';
import { configPath, readConfigFile, writeConfigFile } from '../config.js';

/**
 * D58: removes the stored access token from the config file and keeps the rest (API URL, default project
 * and env), so a later `svcenv login` needs only the token again. The token itself stays valid: a token
 * cannot revoke itself (token management needs a dashboard session, D10), so the output says where to.
 */
export const logoutCommand: Command = {
  name: 'logout',
  summary: 'Remove the stored access token from the config file',
  usage: 'svcenv logout',
  flags: {},
  details:
    'Keeps apiUrl, project and env in ~/.config/svcenv/config.json. The token stays valid until it is revoked\n' +
    'in the dashboard (Tokens); SVCENV_TOKEN, when set, is not touched.',
  async run(_args, ctx) {
    const file = configPath(ctx.env);
    const config = readConfigFile(file);
    const notes: string[] = [];
    if (ctx.env.SVCENV_TOKEN)
      notes.push('note: SVCENV_TOKEN is set in this environment and still used by every command');
    if (!config.token) {
      return { stdout: `no access token was stored in ${file}; nothing to remove\n`, stderr: lines(notes) };
    }
    const { token: _removed, ...kept } = config;
    writeConfigFile(file, kept);
    const names = Object.keys(kept);
    notes.push('note: the token itself stays valid until it is revoked in the dashboard (Tokens)');
    return {
      stdout: `removed the access token from ${file}${names.length ? ` (kept: ${names.join(', ')})` : ''}\n`,
      stderr: lines(notes),
    };
  },
};

const lines = (notes: string[]) => notes.map((n) => `${n}\n`).join('');
