import { Api } from '../api.js';
import { type Command, settingFlags, tokenSource } from '../command.js';
import { requireToken, resolveSettings } from '../config.js';
import { CliError, looksLikeToken } from '../errors.js';

/**
 * D58: who the CLI talks to and as what: the API URL and the access token's name, display prefix, scope,
 * environments, project and expiry (from `GET /v1/auth/token`), plus the project and env commands would use
 * here; with a workload identity (D61), the identity's name. Never the token: the prefix is what the dashboard
 * shows too.
 */
export const whoamiCommand: Command = {
  name: 'whoami',
  summary: "Show the API URL and the access token's name, identity, scope, environments, project and expiry",
  usage: 'svcenv whoami',
  flags: {},
  async run(args, ctx) {
    const settings = resolveSettings(settingFlags(args), ctx.env, ctx.cwd);
    const api = new Api(settings.apiUrl, requireToken(settings));
    const { operations: ops } = await import('../schemas.js');
    const describe = ops.describeOwnToken;
    let self: Awaited<ReturnType<typeof api.json<typeof describe>>>;
    try {
      self = await api.json(describe);
    } catch (err) {
      if (err instanceof CliError && (err.code === 'NOT_FOUND' || err.code === 'HTTP_404')) {
        throw new CliError(
          'SERVER',
          `this server cannot describe an access token (no ${describe.method} ${describe.path})`,
          'upgrade the server; `svcenv projects` shows what the token can see',
        );
      }
      throw err;
    }
    const { projects } = await api.json(ops.listProjects);
    const named = (ref: string) => {
      const p = projects.find((x) => x.id === ref || (x as { slug?: string }).slug === ref);
      return p ? `${p.name} (${p.id})` : ref;
    };
    const rows: [string, string][] = [
      ['API', api.baseUrl],
      [
        'token',
        `${self.name} (${self.tokenPrefix}…), from ${ctx.identity ? 'the workload identity' : tokenSource(args, ctx)}`,
      ],
      ['scope', self.scope],
      ['environments', self.envs.includes('*') ? 'all' : self.envs.join(', ')],
      ['project', self.projectId ? named(self.projectId) : 'every project of the workspace'],
      ['expires', self.expiresAt ?? 'never'],
    ];
    // D61: the identity the token was exchanged for, by the name the server knows it by.
    const identity = self.identity ?? (ctx.identity ? { id: ctx.identity.identity, name: undefined } : undefined);
    if (identity) rows.splice(2, 0, ['identity', identity.name ? `${identity.name} (${identity.id})` : identity.id]);
    // What commands run here would target; a token pasted into a project or env setting is not repeated.
    const safe = (v: string) => (looksLikeToken(v) ? '(an access token, not repeated: fix this setting)' : v);
    if (settings.project) rows.push(['using project', named(safe(settings.project))]);
    if (settings.env) rows.push(['using env', safe(settings.env)]);
    if (settings.projectFile) rows.push(['project file', settings.projectFile]);
    const width = Math.max(...rows.map(([k]) => k.length)) + 1;
    return { stdout: rows.map(([k, v]) => `${`${k}:`.padEnd(width)} ${v}\n`).join('') };
  },
};
