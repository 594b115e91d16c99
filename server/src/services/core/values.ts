import type { Db } from '../../db/index.js';
import { DecryptionError, type ProjectKeyring, type ValueRole } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import type { SourceEnv, SourceVar } from '../../lib/references.js';

/**
 * Variable values in and out of their sealed form: the one module that encrypts or decrypts a value.
 * Its callers have authorized the request first (services/core/authz.ts); the values never leave a service
 * except through a presenter that masks them (services/variables/variables.ts, services/pull/pull.ts).
 */

export type VarType = 'secret' | 'plain';

/**
 * The project of an authorized request (authz.ts's ProjectAccess) as far as sealing needs it: its id, bound
 * into every value's additional data, and its wrapped data key. Written structurally so that this module,
 * which deps.ts reads PlainVar from, imports nothing that takes a Ctx.
 */
type KeyedProject = { project: { id: string; wrapped_key: string } };

export interface PlainVar {
  value: string;
  type: VarType;
  updatedAt: string;
  expiresAt: string | null;
}

/**
 * Seals and opens the values of one environment with its project's key. The additional data binds each
 * ciphertext to (project, environment, key) and to its role, the variable's current value or a history
 * entry: a ciphertext copied to another row, or from the history into the variable, fails to open.
 */
export interface EnvSealer {
  seal(key: string, value: string, role: ValueRole): string;
  open(key: string, sealed: string, role: ValueRole): string;
  /** The history copy of a current sealed value; an undecryptable one is kept as it is (it stays unreadable). */
  toHistory(key: string, current: string): string;
}

export function envSealer(keyring: ProjectKeyring, access: KeyedProject, env: { id: string }): EnvSealer {
  const at = (key: string) => ({
    projectId: access.project.id,
    wrapped: access.project.wrapped_key,
    environmentId: env.id,
    key,
  });
  const open = (key: string, sealed: string, role: ValueRole) => {
    try {
      return keyring.decryptValue(at(key), sealed, role);
    } catch (e) {
      if (e instanceof DecryptionError) throw decryptFailed(key);
      throw e;
    }
  };
  return {
    seal: (key, value, role) => keyring.encryptValue(at(key), value, role),
    open,
    toHistory(key, current) {
      try {
        return keyring.encryptValue(at(key), keyring.decryptValue(at(key), current, 'current'), 'history');
      } catch (e) {
        if (e instanceof DecryptionError) return current;
        throw e;
      }
    },
  };
}

/** A value that does not decrypt is named (never shown) so that an admin can repair it. */
export const decryptFailed = (key: string) =>
  new AppError('DECRYPT_FAILED', `the stored value of "${key}" cannot be decrypted; restore or set it again`, key);

/**
 * Every variable of an environment, decrypted, by key in key order; only called after an authorization
 * check. A value that does not decrypt fails the whole read with DECRYPT_FAILED naming its key (pull,
 * export, diff: a partial environment would be silently wrong).
 */
export async function decryptEnvValues(
  deps: { db: Db; keyring: ProjectKeyring },
  access: KeyedProject,
  env: { id: string },
): Promise<Map<string, PlainVar>> {
  const { vars, broken } = await openEnvValues(deps, access, env);
  const [first] = broken.keys();
  if (first !== undefined) throw decryptFailed(first);
  return vars;
}

/** Like decryptEnvValues, but the keys whose value does not decrypt are returned apart (the listing marks them). */
export async function openEnvValues(
  deps: { db: Db; keyring: ProjectKeyring },
  access: KeyedProject,
  env: { id: string },
): Promise<{ vars: Map<string, PlainVar>; broken: Map<string, Omit<PlainVar, 'value'>> }> {
  const rows = await deps.db
    .selectFrom('variables')
    .select(['key', 'type', 'value_sealed', 'updated_at', 'expires_at'])
    .where('environment_id', '=', env.id)
    .orderBy('key')
    .execute();
  const sealer = envSealer(deps.keyring, access, env);
  const vars = new Map<string, PlainVar>();
  const broken = new Map<string, Omit<PlainVar, 'value'>>();
  for (const r of rows) {
    const meta = { type: r.type, updatedAt: r.updated_at, expiresAt: r.expires_at };
    try {
      vars.set(r.key, { value: sealer.open(r.key, r.value_sealed, 'current'), ...meta });
    } catch (e) {
      if (!(e instanceof AppError && e.code === 'DECRYPT_FAILED')) throw e;
      broken.set(r.key, meta);
    }
  }
  return { vars, broken };
}

/**
 * An environment's decrypted variables as the reference resolver reads them (lib/references.ts, D26: whether
 * each is a secret); a value that did not decrypt is null there, so a reference that reaches it cannot resolve.
 * Resolution for a reader: services/variables/references.ts.
 */
export function sourceEnv(
  envId: string,
  projectId: string,
  vars: ReadonlyMap<string, PlainVar>,
  broken: ReadonlyMap<string, unknown> = new Map(),
): SourceEnv {
  const out = new Map<string, SourceVar>();
  for (const [k, v] of vars) out.set(k, { value: v.value, secret: v.type === 'secret' });
  for (const k of broken.keys()) out.set(k, { value: null, secret: true });
  return { id: envId, project: projectId, vars: out };
}
