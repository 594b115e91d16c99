/**
 * D42: the encrypted pull cache. One file per (API URL, project, environment, credential) in the cache
 * directory (0700), each file 0600, written through a temporary file and a rename. Its name is an HMAC
 * of the API URL, project and environment under a key derived from the credential, so it reveals none of
 * the four; its content is sealed with AES-256-GCM under another key derived (HKDF-SHA256) from the
 * credential, with the file name as additional data (a file copied under another entry's name does not
 * open). Without the token the file is noise. ADR 0016.
 *
 * Inside, one entry per rendering of the pull (format and metadata): the ETag, the body, the server's
 * X-Svcenv-Context header and when the server last confirmed that body (200 or 304).
 *
 * Web Crypto only (`crypto.subtle`, in Node and Bun alike): node:crypto costs several ms to load under Bun
 * (ADR 0001-cli).
 */
import { fs } from './builtins.js';
import { writeSecretFile } from './files.js';

export interface CacheEntry {
  etag: string;
  body: string;
  /** The pull's X-Svcenv-Context header, when it had one. */
  context?: string;
  /** Milliseconds since the epoch when the server last answered this body with 200 or 304. */
  confirmedAt: number;
}

type Entries = Record<string, CacheEntry>;

const utf8 = new TextEncoder();
const MAGIC = utf8.encode('SVC1');
const IV_BYTES = 12;
/** HKDF's salt: fixed, since the input (an access token) is already uniformly random. */
const SALT = utf8.encode('svcenv pull cache v1');

const hex = (buf: ArrayBuffer) => Buffer.from(buf).toString('hex');

export class PullCache {
  private constructor(
    readonly file: string,
    private readonly dir: string,
    private readonly name: string,
    private readonly key: CryptoKey,
  ) {}

  /** Derives the entry's file name and key; touches no file. */
  static async open(dir: string, apiUrl: string, project: string, env: string, token: string): Promise<PullCache> {
    const { subtle } = crypto;
    const ikm = await subtle.importKey('raw', utf8.encode(token), 'HKDF', false, ['deriveBits']);
    // One HKDF output of 64 bytes: the first half keys the file name's HMAC, the second the content.
    const bits = new Uint8Array(
      await subtle.deriveBits(
        { name: 'HKDF', hash: 'SHA-256', salt: SALT, info: utf8.encode('name, content') },
        ikm,
        512,
      ),
    );
    const [nameKey, key] = await Promise.all([
      subtle.importKey('raw', bits.subarray(0, 32), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
      subtle.importKey('raw', bits.subarray(32), 'AES-GCM', false, ['encrypt', 'decrypt']),
    ]);
    // JSON of the three: no separator inside one of them can make two different triples collide.
    const mac = await subtle.sign('HMAC', nameKey, utf8.encode(JSON.stringify([apiUrl, project, env])));
    const name = hex(mac).slice(0, 40);
    return new PullCache(`${dir}/${name}`, dir, name, key);
  }

  /** Every entry of the file; none when it is absent, unreadable, or sealed under another key. */
  async read(): Promise<Entries> {
    let data: Buffer;
    try {
      data = fs().readFileSync(this.file);
    } catch {
      return {};
    }
    if (data.length < MAGIC.length + IV_BYTES || !data.subarray(0, MAGIC.length).equals(MAGIC)) return {};
    try {
      const bytes = new Uint8Array(data);
      const plain = await crypto.subtle.decrypt(
        {
          name: 'AES-GCM',
          iv: bytes.subarray(MAGIC.length, MAGIC.length + IV_BYTES),
          additionalData: utf8.encode(this.name),
        },
        this.key,
        bytes.subarray(MAGIC.length + IV_BYTES),
      );
      const parsed = JSON.parse(new TextDecoder().decode(plain)) as unknown;
      return typeof parsed === 'object' && parsed !== null ? (parsed as Entries) : {};
    } catch {
      return {};
    }
  }

  /**
   * Seals and writes the entries: a new file created 0600 beside the old one, then renamed over it (a
   * reader sees the old file or the new one, never half of one). Failures are the caller's to ignore.
   */
  async write(entries: Entries): Promise<void> {
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const sealed = await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: utf8.encode(this.name) },
      this.key,
      utf8.encode(JSON.stringify(entries)),
    );
    const { chmodSync, mkdirSync } = fs();
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    writeSecretFile(this.file, Buffer.concat([MAGIC, iv, new Uint8Array(sealed)]));
  }

  /** D42: a 401, 403 or 404 deletes the entry, so a revoked token loses its cached copy too. */
  remove(): void {
    try {
      fs().rmSync(this.file, { force: true });
    } catch {
      // nothing to delete, or a directory we cannot write: nothing more to do
    }
  }
}

/** An age for people: `45s`, `12m`, `3h 5m`, `2d 4h`. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}
