import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hash,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

/**
 * Envelope encryption (spec: AES-256-GCM, a key per project). The master key wraps a random 256-bit data key
 * per project; values are encrypted under the project key with a fresh 96-bit nonce and their location
 * (project, environment, key) bound as additional authenticated data, so a ciphertext moved to another row
 * fails to decrypt instead of yielding the wrong value.
 *
 * Stored form: `v1.<base64(nonce | ciphertext | tag)>`.
 */
const VERSION = 'v1.';
/**
 * Variable values sealed since 2026-11-25 carry `v2.`: the same cipher, with the value's role (the current
 * value of a key, or a history entry) in the additional data too. A history ciphertext copied into the
 * variable's row then fails to open. `v1.` values (role not bound) are re-sealed once at start-up
 * (services/variables/value-binding.ts) and refused everywhere else.
 */
const VALUE_VERSION = 'v2.';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class DecryptionError extends Error {
  constructor() {
    super('ciphertext failed authentication');
  }
}

export function seal(key: Buffer, plaintext: Buffer, aad: string, version = VERSION): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return version + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64');
}

export function open(key: Buffer, sealed: string, aad: string, version = VERSION): Buffer {
  if (!sealed.startsWith(version)) throw new DecryptionError();
  const raw = Buffer.from(sealed.slice(version.length), 'base64');
  if (raw.length < NONCE_BYTES + TAG_BYTES) throw new DecryptionError();
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new DecryptionError();
  }
}

/** AAD of a project data key wrapped by the master key. */
export const projectKeyAad = (projectId: string) => `svcenv/project-key/${projectId}`;
/** AAD of a variable value before its role was bound (`v1.`): its project, environment and key. */
export const valueAad = (projectId: string, environmentId: string, key: string) =>
  `svcenv/value/${projectId}/${environmentId}/${key}`;
/**
 * Where a sealed value lives: the variable's row, one of its history entries, or a proposed value of a change
 * request (D47; its location's key names the request too, so a value cannot move between requests), or a
 * person's override (D75; its location's key names the person too).
 */
export type ValueRole = 'current' | 'history' | 'change-request' | 'override';
const boundValueAad = (projectId: string, environmentId: string, key: string, role: ValueRole) =>
  `${valueAad(projectId, environmentId, key)}#${role}`;
/** AAD of a project credential that is not a variable (ProjectKeyring.sealCredential). */
const credentialAad = (projectId: string, place: string) => `svcenv/credential/${projectId}/${place}`;
/** True for a value sealed before roles were bound (re-sealed at start-up). */
export const isLegacyValue = (sealed: string) => sealed.startsWith(VERSION);

export function wrapProjectKey(masterKey: Buffer, projectId: string, dataKey: Buffer): string {
  return seal(masterKey, dataKey, projectKeyAad(projectId));
}

export function unwrapProjectKey(masterKey: Buffer, projectId: string, wrapped: string): Buffer {
  return open(masterKey, wrapped, projectKeyAad(projectId));
}

export const newDataKey = (): Buffer => randomBytes(32);

/** A value's place: its project (with the wrapped project key), environment and key. */
export interface ValueLocation {
  projectId: string;
  wrapped: string;
  environmentId: string;
  key: string;
}

/**
 * Per-process cache of unwrapped project keys: unwrapping is cheap but sits on the pull hot path.
 * Keys are dropped when a project is deleted or re-wrapped.
 */
export class ProjectKeyring {
  private readonly cache = new Map<string, Buffer>();
  constructor(private readonly masterKey: Buffer) {}

  key(projectId: string, wrapped: string): Buffer {
    let key = this.cache.get(`${projectId}:${wrapped}`);
    if (!key) {
      key = unwrapProjectKey(this.masterKey, projectId, wrapped);
      this.cache.set(`${projectId}:${wrapped}`, key);
    }
    return key;
  }

  encryptValue(p: ValueLocation, value: string, role: ValueRole): string {
    const aad = boundValueAad(p.projectId, p.environmentId, p.key, role);
    return seal(this.key(p.projectId, p.wrapped), Buffer.from(value, 'utf8'), aad, VALUE_VERSION);
  }

  decryptValue(p: ValueLocation, sealed: string, role: ValueRole): string {
    const aad = boundValueAad(p.projectId, p.environmentId, p.key, role);
    return open(this.key(p.projectId, p.wrapped), sealed, aad, VALUE_VERSION).toString('utf8');
  }

  /**
   * A credential of the project that is not a variable (D70 a connection's password, D72 a rotation's pending
   * password), sealed with the project key and bound to its `place` (the row and the field).
   */
  sealCredential(p: { projectId: string; wrapped: string }, place: string, value: string): string {
    return seal(this.key(p.projectId, p.wrapped), Buffer.from(value, 'utf8'), credentialAad(p.projectId, place));
  }

  openCredential(p: { projectId: string; wrapped: string }, place: string, sealed: string): string {
    return open(this.key(p.projectId, p.wrapped), sealed, credentialAad(p.projectId, place)).toString('utf8');
  }

  /** A `v1.` value, for its one-time re-sealing only. */
  decryptLegacyValue(p: ValueLocation, sealed: string): string {
    return open(this.key(p.projectId, p.wrapped), sealed, valueAad(p.projectId, p.environmentId, p.key)).toString(
      'utf8',
    );
  }

  newWrappedKey(projectId: string): string {
    return wrapProjectKey(this.masterKey, projectId, newDataKey());
  }

  forget(projectId: string): void {
    for (const k of this.cache.keys()) if (k.startsWith(`${projectId}:`)) this.cache.delete(k);
  }
}

/** One-shot `crypto.hash`: several times cheaper than createHash for the short inputs hashed per request. */
export const sha256Hex = (s: string | Buffer): string => hash('sha256', s, 'hex');

/** Derives a purpose-bound subkey (e.g. the JWT signing key) from the master key. */
export const deriveKey = (masterKey: Buffer, purpose: string): Buffer =>
  createHmac('sha256', masterKey).update(`svcenv/derive/${purpose}`).digest();

/** Constant-time comparison of two strings via their SHA-256 digests (equal length by construction). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
