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
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class DecryptionError extends Error {
  constructor() {
    super('ciphertext failed authentication');
  }
}

export function seal(key: Buffer, plaintext: Buffer, aad: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return VERSION + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64');
}

export function open(key: Buffer, sealed: string, aad: string): Buffer {
  if (!sealed.startsWith(VERSION)) throw new DecryptionError();
  const raw = Buffer.from(sealed.slice(VERSION.length), 'base64');
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
/** AAD of a variable value (current or history): its project, environment and key. */
export const valueAad = (projectId: string, environmentId: string, key: string) =>
  `svcenv/value/${projectId}/${environmentId}/${key}`;

export function wrapProjectKey(masterKey: Buffer, projectId: string, dataKey: Buffer): string {
  return seal(masterKey, dataKey, projectKeyAad(projectId));
}

export function unwrapProjectKey(masterKey: Buffer, projectId: string, wrapped: string): Buffer {
  return open(masterKey, wrapped, projectKeyAad(projectId));
}

export const newDataKey = (): Buffer => randomBytes(32);

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

  encryptValue(projectId: string, wrapped: string, environmentId: string, varKey: string, value: string): string {
    return seal(this.key(projectId, wrapped), Buffer.from(value, 'utf8'), valueAad(projectId, environmentId, varKey));
  }

  decryptValue(projectId: string, wrapped: string, environmentId: string, varKey: string, sealed: string): string {
    return open(this.key(projectId, wrapped), sealed, valueAad(projectId, environmentId, varKey)).toString('utf8');
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
