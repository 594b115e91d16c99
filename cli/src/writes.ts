/**
 * What `push`, `vars set` and `vars unset` share around a write to one environment (ADR 0028): a protected
 * environment's changes are shown and confirmed first, as the dashboard asks "Change protected prod?"; and
 * under D47 a write refused with APPROVAL_REQUIRED is sent again as a change request, whose id and dashboard
 * link are printed. Keys only, never values.
 */
import { type Api, ApiError } from './api.js';
import type { FlagSpecs } from './args.js';
import { CliError } from './errors.js';
import { explainUnresolved, validateQuery } from './unresolved.js';

export interface Target {
  project: string;
  env: string;
}

/** What a write changes, by key (never values). */
export interface Changes {
  created: string[];
  updated: string[];
  deleted: string[];
}

export const writeFlags = {
  yes: {
    type: 'boolean',
    short: 'y',
    description: 'change a protected environment without asking (scripts; without a terminal it is required)',
  },
  message: {
    type: 'string',
    short: 'm',
    description: 'the message of the change request opened when the environment requires approval',
  },
} as const satisfies FlagSpecs;

/** The environment's flags (GET /v1/projects/:id/envs); undefined when the project has no such environment. */
export async function envFlags(
  api: Api,
  t: Target,
): Promise<{ protected: boolean; requireApproval: boolean } | undefined> {
  const { operations: ops } = await import('./schemas.js');
  const { envs } = await api.json(ops.listEnvs, { params: { id: t.project } });
  return envs.find((e) => e.name === t.env);
}

/** `A, B, C` with at most `max` names, then how many more. */
export function keyList(keys: readonly string[], max = 20): string {
  return keys.length <= max ? keys.join(', ') : `${keys.slice(0, max).join(', ')} and ${keys.length - max} more`;
}

/** `created: A; updated: B, C` — the keys of each kind of change. */
export function describeChanges(c: Changes, sep = '; '): string {
  return (
    [
      ['created', c.created],
      ['updated', c.updated],
      ['deleted', c.deleted],
    ] as const
  )
    .filter(([, keys]) => keys.length > 0)
    .map(([what, keys]) => `${what}: ${keyList(keys)}`)
    .join(sep);
}

const count = (c: Changes) => c.created.length + c.updated.length + c.deleted.length;
const variables = (n: number) => `${n} variable${n === 1 ? '' : 's'}`;

/**
 * A protected environment is changed only once confirmed: `--yes`, or `y` on a terminal. Without a terminal
 * and without `--yes` nothing is sent (exit 1, the message says to pass --yes). An environment that requires
 * approval is not asked about: an access token's write becomes a change request, reviewed anyway (as in the
 * dashboard), unless the credential is a dashboard session, which an Owner or Admin may write with directly.
 */
export async function confirmProtected(
  env: { protected: boolean; requireApproval: boolean } | undefined,
  t: Target,
  changes: Changes,
  o: { yes: boolean; token: string; what: string },
): Promise<void> {
  if (!env?.protected || o.yes || count(changes) === 0) return;
  if (env.requireApproval && !o.token.startsWith('eyJ')) return;
  const { canAsk, confirm } = await import('./prompt.js');
  const n = count(changes);
  if (!(await canAsk())) {
    throw new CliError(
      'CONFIRM',
      `${t.env} is a protected environment: ${o.what} would change ${variables(n)} (${describeChanges(changes)}); nothing was sent`,
      'confirm on a terminal, or pass --yes (-y) to change it without a terminal',
    );
  }
  const lines = describeChanges(changes, '\n  ');
  const { fs } = await import('./builtins.js');
  fs().writeSync(2, `${t.env} is a protected environment; ${o.what} changes ${variables(n)}:\n  ${lines}\n`);
  if (!(await confirm(`Change protected ${t.env}?`))) {
    throw new CliError('CONFIRM', `not confirmed: nothing was changed in ${t.env}`);
  }
}

export const approvalRequired = (err: unknown): err is ApiError =>
  err instanceof ApiError && err.code === 'APPROVAL_REQUIRED';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The dashboard's page of the environment's change requests (web: `/projects/:id?tab=requests&env=`), or of
 * one of them (`&request=<id>` opens it), on the API URL's origin, where the server serves the dashboard. A
 * project named by its slug is looked up for its id.
 */
export async function requestsPage(api: Api, t: Target, requestId?: string): Promise<string> {
  let id = t.project;
  if (!UUID.test(id)) {
    try {
      const { operations: ops } = await import('./schemas.js');
      id = (await api.json(ops.getProject, { params: { id } })).id;
    } catch {
      // the slug then: the dashboard takes it too
    }
  }
  const one = requestId ? `&request=${encodeURIComponent(requestId)}` : '';
  return `${new URL(api.baseUrl).origin}/projects/${encodeURIComponent(id)}?tab=requests&env=${encodeURIComponent(t.env)}${one}`;
}

/** The default message of a change request: the command and its keys, within the server's 2,000 characters. */
export function defaultMessage(what: string, changes: Changes): string {
  const text = `${what}: ${describeChanges(changes)}`;
  return text.length <= 2000 ? text : `${text.slice(0, 1997)}...`;
}

/**
 * D47: the same changes as a change request (`POST .../envs/:env/change-requests`), against the revision that
 * was read (D46) and validated like the write (D67). Returns the lines that say what was opened and where an
 * approver finds it.
 */
export async function openChangeRequest(
  api: Api,
  t: Target,
  body: {
    set: { key: string; value: string; type: 'plain' | 'secret' }[];
    delete: string[];
    message: string;
  },
  changes: Changes,
  o: { revision: string | null | undefined; flags: Record<string, unknown> },
): Promise<string> {
  const { operations: ops, MAX_BULK_ITEMS } = await import('./schemas.js');
  if (body.set.length > MAX_BULK_ITEMS || body.delete.length > MAX_BULK_ITEMS) {
    throw new CliError(
      'APPROVAL_REQUIRED',
      `${t.env} requires approval, and ${count(changes)} changes are more than one change request holds (${MAX_BULK_ITEMS})`,
      'push a smaller file (--file) at a time',
    );
  }
  const opened = await api
    .json(ops.openChangeRequest, {
      params: { id: t.project, env: t.env },
      body,
      ...(o.revision ? { headers: { 'if-match': `"rev:${o.revision}"` } } : {}),
      ...validateQuery(o.flags),
    })
    .catch((err: unknown) => {
      throw explainUnresolved(err);
    });
  const page = await requestsPage(api, t, opened.id);
  return (
    `${t.env} requires approval: opened change request ${opened.id} (${describeChanges(changes)}); nothing changes until an Owner or project Admin approves it\n` +
    `review it in the dashboard: ${page}\n` +
    `or: svcenv requests show ${opened.id.slice(0, 8)} -p ${t.project} -e ${t.env}\n`
  );
}
