import { Api } from '../api.js';
import { fs, path } from '../builtins.js';
import { type Command, settingFlags } from '../command.js';
import {
  checkEnvName,
  MissingTargetError,
  PROJECT_FILE,
  type ProjectFile,
  readProjectFile,
  resolveSettings,
} from '../config.js';
import { CliError, closest, looksLikeToken, shown } from '../errors.js';

type ProjectRow = { id: string; name: string; slug?: string | undefined; envs: string[] };

/**
 * D58: `svcenv setup` writes `.svcenv.json` ({project, env}) in the current directory, which every command
 * run below it then reads (between the environment variables and the user config). It holds no secret and
 * is meant to be committed, so it is written 0644 and never holds a token. Without flags it asks nothing
 * (it may run where no one can answer): it lists the projects and environments and prints what to pass.
 */
export const setupCommand: Command = {
  name: 'setup',
  summary: 'Write .svcenv.json (project and env) here; without flags, list what to pass',
  usage: 'svcenv setup [--project <id|slug>] [--env <name>]',
  flags: {
    project: { type: 'string', description: 'project id or slug to write (see `svcenv projects`)' },
    env: { type: 'string', description: 'environment name to write' },
  },
  details:
    'Every command run in this directory or below it then uses that project and env, unless a flag or\n' +
    'SVCENV_PROJECT/SVCENV_ENV says otherwise. The file holds no secret: commit it. With an access token\n' +
    '(`svcenv login`) the project and env are checked against what the token can see before writing, and\n' +
    'the project is written by its slug (given its id, setup looks the slug up); if the slug is changed\n' +
    'later, run setup again.',
  async run(args, ctx) {
    const projectFlag = nonEmpty(args.flags.project);
    const envFlag = nonEmpty(args.flags.env);
    // The flags count as given, so a broken `.svcenv.json` here is not read when setup is told what to write.
    const settings = resolveSettings({ ...settingFlags(args), project: projectFlag, env: envFlag }, ctx.env, ctx.cwd);
    const lookup = async (): Promise<ProjectRow[] | undefined> => {
      if (!settings.token) return undefined;
      const { operations: ops } = await import('../schemas.js');
      return (await new Api(settings.apiUrl, settings.token).json(ops.listProjects)).projects;
    };

    if (!projectFlag && !envFlag) {
      if (!settings.token) {
        throw new CliError(
          'CONFIG',
          'no access token to list the projects with',
          'run `svcenv login --token -` first, or pass --project <id|slug> --env <name>',
        );
      }
      return { stdout: choices((await lookup())!) };
    }

    const project = projectFlag ?? settings.project;
    if (!project) throw new MissingTargetError('project', settings);
    if (looksLikeToken(project)) {
      throw new CliError('USAGE', 'the project is an access token, not a project id or slug', 'see `svcenv projects`');
    }
    const file = path().join(ctx.cwd, PROJECT_FILE);
    // Re-running setup with only --project keeps the env already written here for that same project.
    const here: ProjectFile = envFlag === undefined && fs().existsSync(file) ? readProjectFile(file) : {};
    if (envFlag !== undefined) checkEnvName(envFlag);

    const notes: string[] = [];
    const projects = await lookup();
    let envs: string[] | undefined;
    // D48/D58: the file names the project by its slug, which reads as the project in a review and in a
    // commit; given an id, the project is looked up for it. Without a token it is written as given.
    let written = project;
    const names = new Set([project]);
    let env = envFlag;
    if (projects) {
      const p = projects.find((x) => x.id === project || x.slug === project);
      if (!p) {
        const guess = closest(
          project,
          projects.flatMap((x) => (x.slug ? [x.slug, x.id] : [x.id])),
        );
        throw new CliError(
          'NOT_FOUND',
          `the token sees no project ${shown(project)}`,
          guess
            ? `did you mean --project ${guess}? (see \`svcenv setup\` without flags)`
            : 'run `svcenv setup` without flags for the list',
        );
      }
      envs = p.envs;
      names.add(p.id);
      if (p.slug) {
        names.add(p.slug);
        written = p.slug;
      }
      env ??= here.project !== undefined && names.has(here.project) ? here.env : undefined;
      if (env !== undefined && !p.envs.includes(env)) {
        const guess = closest(env, p.envs);
        throw new CliError(
          'NOT_FOUND',
          `project ${p.name} has no environment ${shown(env)}: choose one with --env: ${p.envs.join(', ')}`,
          guess ? `did you mean --env ${guess}?` : undefined,
        );
      }
    } else {
      notes.push('note: not checked against the server (no access token; `svcenv login` first to check)');
      env ??= here.project === project ? here.env : undefined;
    }
    if (env !== undefined) checkEnvName(env);
    const content: ProjectFile = env === undefined ? { project: written } : { project: written, env };
    fs().writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o644 });
    const out = [`wrote ${file}: project ${written}${env === undefined ? '' : `, env ${env}`}`];
    if (written !== project) out.push(`(${project} is the project ${written}: the file names it by its slug)`);
    if (env === undefined) {
      out.push(
        envs?.length
          ? `no env yet: add one with \`svcenv setup --project ${written} --env <name>\` (${envs.join(', ')})`
          : 'no env yet: add one with `svcenv setup --env <name>`',
      );
    }
    out.push('it holds no secret: commit it, so that everyone working here uses the same project and env');
    return { stdout: `${out.join('\n')}\n`, stderr: notes.map((n) => `${n}\n`).join('') };
  },
};

/** What `setup` without flags prints: every project the token sees, with its envs, and what to pass. */
function choices(projects: ProjectRow[]): string {
  if (projects.length === 0) {
    return 'the access token sees no project; create one in the dashboard, or use a token that sees one\n';
  }
  // The id always works; a slug (D48) is shown beside it when the server has them.
  const slugs = projects.some((p) => p.slug);
  const rows = [
    ['ID', ...(slugs ? ['SLUG'] : []), 'NAME', 'ENVS'],
    ...projects.map((p) => [p.id, ...(slugs ? [p.slug ?? ''] : []), p.name, p.envs.join(', ')]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const table = rows.map((r) =>
    r
      .map((cell, c) => (c < r.length - 1 ? cell.padEnd(widths[c]!) : cell))
      .join('  ')
      .trimEnd(),
  );
  const first = projects[0]!;
  const example = `svcenv setup --project ${first.slug || first.id} --env ${first.envs[0] ?? '<name>'}`;
  return `${table.join('\n')}\n\nto use one of them in this directory, run for example:\n  ${example}\n`;
}

const nonEmpty = (v: string | boolean | undefined): string | undefined =>
  typeof v === 'string' && v !== '' ? v : undefined;
