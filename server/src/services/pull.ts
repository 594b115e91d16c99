import { createHash } from 'node:crypto';
import { renderDotenv } from '@svcenv/contract';
import { requestEpoch } from '../db/epoch-cache.js';
import { ReferenceError422 } from '../lib/errors.js';
import type { Resolution } from '../lib/references.js';
import { auditRow } from './audit.js';
import { loadProjectAccess, requireEnv } from './authz.js';
import type { Deps } from './deps.js';
import { emitEvent } from './events.js';
import type { Principal } from './principal.js';
import { findEnv } from './projects.js';
import { decryptEnvValues, MASK, type PlainVar, resolveEnv } from './variables.js';

/**
 * Pull and export (spec "Variable endpoints", rules 4-9, D28-D30).
 *
 * The decrypted, resolved environment is cached per process keyed by the environment's revision, which every
 * write bumps in its own transaction. Each request still authenticates, authorizes and reads the revision
 * from the database, so several instances stay correct; only unchanged environments skip decryption.
 */
interface ResolvedEnv {
  revision: number;
  vars: Map<string, PlainVar>;
  resolved: Map<string, Resolution>;
  /** Rendered pull bodies by variant (format, metadata, project name). */
  bodies: Map<string, { body: string; etag: string; context: string }>;
}

export class RenderCache {
  private readonly map = new Map<string, ResolvedEnv>();
  constructor(private readonly max = 2_000) {}
  get(envId: string, revision: number): ResolvedEnv | undefined {
    const e = this.map.get(envId);
    return e && e.revision === revision ? e : undefined;
  }
  set(envId: string, entry: ResolvedEnv): void {
    this.map.delete(envId);
    if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as string);
    this.map.set(envId, entry);
  }
}

type Format = 'dotenv' | 'k8s';

/** D28a: the synthetic context variables; a user-defined variable of the same name wins. */
function contextEntries(entries: [string, string][], ctx: { projectId: string; env: string; projectName: string }) {
  const own = new Set(entries.map(([k]) => k));
  const extra: [string, string][] = [
    ['SVCENV_PROJECT', ctx.projectId],
    ['SVCENV_ENV', ctx.env],
    ['SVCENV_PROJECT_NAME', ctx.projectName],
  ];
  return extra.filter(([k]) => !own.has(k));
}
function withContext(entries: [string, string][], ctx: { projectId: string; env: string; projectName: string }) {
  return [...entries, ...contextEntries(entries, ctx)];
}

/** D28: `<name>-<env>`, the name lower-cased with runs outside [a-z0-9] turned into `-`, cut to 253. */
export function k8sSecretName(projectName: string, env: string): string {
  const name = projectName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `${name || 'svcenv'}-${env}`.slice(0, 253).replace(/-+$/, '');
}

export function renderK8s(name: string, entries: [string, string][]): string {
  // An empty value is written `""`: a bare `KEY:` would be YAML null, which Kubernetes refuses in `data`.
  const data = entries.map(([k, v]) => `  ${k}: ${v ? Buffer.from(v, 'utf8').toString('base64') : '""'}`).join('\n');
  return `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\ntype: Opaque\ndata:${entries.length ? `\n${data}` : ' {}'}\n`;
}

function render(format: Format, name: string, entries: [string, string][]): string {
  return format === 'k8s' ? renderK8s(name, entries) : renderDotenv(entries);
}

async function loadResolved(
  deps: Deps,
  principal: Principal,
  projectId: string,
  envName: string,
  need: 'read' | 'write',
) {
  // Pull and export write nothing the cache holds, so their lookups share the counter value their
  // authentication read (db/epoch-cache.ts).
  const at = requestEpoch(deps.db, principal);
  const access = await loadProjectAccess(deps.db, principal, projectId, at);
  const env = await findEnv(deps.db, projectId, envName, at);
  requireEnv(access, env, need);
  let cached = deps.renderCache.get(env.id, env.revision);
  if (!cached) {
    const vars = await decryptEnvValues(deps, access, env);
    cached = { revision: env.revision, vars, resolved: resolveEnv(vars), bodies: new Map() };
    deps.renderCache.set(env.id, cached);
  }
  return { access, env, cached };
}

export interface PullResult {
  body: string;
  etag: string;
  /** The context variables the server added to the body, comma-separated ("" with metadata=false). */
  context: string;
  contentType: string;
}

export async function pull(
  deps: Deps,
  principal: Principal,
  input: { projectId: string; env: string; metadata: boolean; format: Format; operator: boolean },
): Promise<PullResult> {
  const { access, cached } = await loadResolved(deps, principal, input.projectId, input.env, 'read');
  const projectName = access.project.name;
  const variant = `${input.format}|${input.metadata}|${projectName}`;
  let out = cached.bodies.get(variant);
  if (!out) {
    const entries: [string, string][] = [];
    for (const [key, r] of cached.resolved) {
      // Rule 4: any unresolvable chain fails the whole pull with the flat 422 body.
      if (!r.ok) throw new ReferenceError422(r.code, key, r.message);
      entries.push([key, r.value]);
    }
    const context = input.metadata
      ? contextEntries(entries, { projectId: input.projectId, env: input.env, projectName })
      : [];
    const body = render(input.format, k8sSecretName(projectName, input.env), [...entries, ...context]);
    // D29: a strong ETag, the hash of the body. `context` names the variables the server added (ADR 0002).
    out = {
      body,
      etag: `"${createHash('sha256').update(body).digest('base64url')}"`,
      context: context.map(([k]) => k).join(', '),
    };
    cached.bodies.set(variant, out);
  }
  // Every pull is durably audited before it is answered (group commit, services/audit.ts).
  await deps.auditBatcher.append(
    auditRow(deps.clock, principal, {
      action: 'vars.pull',
      projectId: input.projectId,
      targetEnv: input.env,
      detail: { format: input.format, ...(input.operator ? { client: 'operator' } : {}) },
    }),
  );
  if (input.operator) await recordOperatorSync(deps, principal.workspaceId);
  await emitEvent(deps, deps.db, principal, 'vars.pull', input.projectId, input.env, { keys: cached.vars.keys() });
  return { ...out, contentType: input.format === 'k8s' ? 'application/yaml' : 'text/plain; charset=utf-8' };
}

/**
 * Rule 7 / D18: `lastSync` is the time of the latest operator pull, so every one records it. Never moved
 * backwards: of two concurrent pulls, the earlier may commit last.
 */
async function recordOperatorSync(deps: Deps, workspaceId: string): Promise<void> {
  const now = deps.clock.now().toISOString();
  await deps.db
    .updateTable('workspaces')
    .set({ operator_last_sync: now })
    .where('id', '=', workspaceId)
    .where((eb) => eb.or([eb('operator_last_sync', 'is', null), eb('operator_last_sync', '<', now)]))
    .execute();
}

export async function exportVars(
  deps: Deps,
  principal: Principal,
  input: { projectId: string; env: string; metadata: boolean; format: Format; reveal: boolean },
): Promise<{ body: string; contentType: string; filename: string }> {
  // Export with reveal needs write permission (D23); masked export needs read.
  const { access, cached } = await loadResolved(
    deps,
    principal,
    input.projectId,
    input.env,
    input.reveal ? 'write' : 'read',
  );
  const entries: [string, string][] = [];
  for (const [key, v] of cached.vars) {
    const r = cached.resolved.get(key)!;
    // Rule 3: a variable in a circular chain is left unresolved (its literal value); the rest resolve.
    const value = r.ok ? r.value : v.value;
    const secret = r.ok ? r.usedSecret : v.type === 'secret';
    entries.push([key, secret && !input.reveal ? MASK : value]);
  }
  const projectName = access.project.name;
  const all = input.metadata
    ? withContext(entries, { projectId: input.projectId, env: input.env, projectName })
    : entries;
  const name = k8sSecretName(projectName, input.env);
  await deps.auditBatcher.append(
    auditRow(deps.clock, principal, {
      action: 'vars.export',
      projectId: input.projectId,
      targetEnv: input.env,
      detail: { format: input.format, reveal: input.reveal },
    }),
  );
  return {
    body: render(input.format, name, all),
    contentType: input.format === 'k8s' ? 'application/yaml' : 'text/plain; charset=utf-8',
    filename: `${name}.${input.format === 'k8s' ? 'yaml' : 'env'}`,
  };
}
