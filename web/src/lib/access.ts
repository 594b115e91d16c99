/**
 * What the signed-in user may do in a project, read from the project's `access` (D57), which the server
 * computes with the same rules it then enforces. The dashboard shows a control only when its request would
 * be allowed, so a refusal never comes as a surprise after the user acted.
 */
import type { Project } from '@svcenv/contract';

export type EnvPermission = Project['access']['envs'][string];

/** The user's permission on one environment; an environment missing from the answer counts as none. */
export function envPermission(project: Project, env: string): EnvPermission {
  return Object.hasOwn(project.access.envs, env) ? project.access.envs[env]! : 'none';
}

export const canRead = (project: Project, env: string) => envPermission(project, env) !== 'none';
/** Add, edit, delete, import, restore, reveal (revealing needs write, ADR 0006). */
export const canWrite = (project: Project, env: string) => envPermission(project, env) === 'write';

/** The environments offered as tabs, choices and targets: those the user may at least read. */
export function readableEnvs<E extends { name: string }>(project: Project, envs: E[]): E[] {
  return envs.filter((e) => canRead(project, e.name));
}

/**
 * What each permission allows, in the words every place that grants one uses (the project members grid, the
 * token dialog, docs/permissions.md): `read` pulls plaintext with a token (D23, spec "Access token scopes")
 * while the dashboard shows it masked, because revealing needs `write` (spec "Authorization layers").
 */
export const PERMISSION_HELP: Record<EnvPermission, string> = {
  none: 'cannot open the environment',
  read: 'sees values masked here, and can pull them in plain text with a token',
  write: 'can also reveal values here, and add, change and delete them',
};

/** The protected flag in words (spec "Authorization layers"): it changes the Developer default only. */
export const PROTECTED_HELP =
  'Protected: Developers get no access unless granted one per environment; Admins, Read-only members and ' +
  'Owners keep theirs. Only Owners turn protection on or off.';

/** The one sentence shown where write controls are hidden, naming who can change it. */
export function readOnlyNote(env: string): string {
  return `You have read access to ${env}: values are masked here, and a read token you create pulls them in plain text. Ask a project Admin for write to reveal or change them.`;
}

/** The sentence that accounts for environments the user cannot open at all (they are not shown as tabs). */
export function hiddenEnvsNote(project: Project, envs: { name: string }[]): string | null {
  const hidden = envs.filter((e) => !canRead(project, e.name)).map((e) => e.name);
  if (hidden.length === 0) return null;
  const list = hidden.length === 1 ? hidden[0] : `${hidden.slice(0, -1).join(', ')} and ${hidden.at(-1)}`;
  return `You have no access to ${list}; a project Admin can grant it.`;
}

/**
 * D47, ADR 0013: whether the user's writes to this environment apply directly. With approval required only
 * an Owner or the project's Admin writes directly (through a dashboard session, which this is); anyone else
 * with write proposes a change request instead.
 */
export const canWriteDirectly = (project: Project, env: { name: string; requireApproval: boolean }) =>
  canWrite(project, env.name) && (!env.requireApproval || project.access.admin);

/** Writes to this environment become a change request: write permission, but approval stands in the way. */
export const writesNeedApproval = (project: Project, env: { name: string; requireApproval: boolean }) =>
  canWrite(project, env.name) && !canWriteDirectly(project, env);

/**
 * Who may approve or reject a change request (ADR 0013): an Owner or project Admin with write on the
 * environment, who is not its author.
 */
export const canReview = (project: Project, env: string, authorId: string, userId: string) =>
  project.access.admin && canWrite(project, env) && authorId !== userId;

/** The author withdraws their own request while it is open (it needs write, as opening did). */
export const canWithdraw = (project: Project, env: string, authorId: string, userId: string) =>
  canWrite(project, env) && authorId === userId;
