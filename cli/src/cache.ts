/**
 * D42: the encrypted pull cache. One file per (API URL, project, environment, credential) in the cache
 * directory (0700), each file 0600, written through a temporary file and a rename. Its name is an HMAC
 * of the API URL, project and environment under a key derived from the credential, so it reveals none of
 * the four; its content is sealed with AES-256-GCM under another key derived (HKDF-SHA256) from the
 * credential, with the file name as additional data (a file copied under another entry's name does not
 * open). Without the token the file is noise. ADR 0016.
 *
 * Inside, the environment's variables as the server last gave them, per selection (all of it, or a D67
 * subset): snapshot.ts, from which every format is rendered. A project named by its slug (D58) keeps its
 * variables in the file of its id once an answer has told the id (SVCENV_PROJECT), and the slug's file
 * then only points there: `-p <slug>` and `-p <id>` read and refresh the same copy.
 *
 * Web Crypto only (`crypto.subtle`, in Node and Bun alike): node:crypto costs several ms to load under Bun
 * (ADR 0001-cli).
 */
import { fs } from './builtins.js';
import { writeSecretFile } from './files.js';
import { type Rendering, type Snapshot, snapshotOf } from './snapshot.js';

const utf8 = new TextEncoder();
const MAGIC = utf8.encode('SVC1');
const IV_BYTES = 12;
/** HKDF's salt: fixed, since the input (an access token) is already uniformly random. */
const SALT = utf8.encode('svcenv pull cache v1');

const hex = (buf: ArrayBuffer) => Buffer.from(buf).toString('hex');

/** One sealed file of the cache: its name and content keys (ADR 0016). */
export class PullCache {
  private constructor(
    readonly file: string,
    private readonly dir: string,
    private readonly name: string,
    private readonly key: CryptoKey,
    private readonly nameKey: CryptoKey,
    private readonly apiUrl: string,
    private readonly env: string,
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
    return PullCache.named(dir, key, nameKey, apiUrl, project, env);
  }

  private static async named(
    dir: string,
    key: CryptoKey,
    nameKey: CryptoKey,
    apiUrl: string,
    project: string,
    env: string,
  ): Promise<PullCache> {
    // JSON of the three: no separator inside one of them can make two different triples collide.
    const mac = await crypto.subtle.sign('HMAC', nameKey, utf8.encode(JSON.stringify([apiUrl, project, env])));
    const name = hex(mac).slice(0, 40);
    return new PullCache(`${dir}/${name}`, dir, name, key, nameKey, apiUrl, env);
  }

  /** The file of another project's same environment, for the same API URL and credential. */
  at(project: string): Promise<PullCache> {
    return PullCache.named(this.dir, this.key, this.nameKey, this.apiUrl, project, this.env);
  }

  /** The file's content; undefined when it is absent, unreadable, or sealed under another key. */
  async read(): Promise<unknown> {
    let data: Buffer;
    try {
      data = fs().readFileSync(this.file);
    } catch {
      return undefined;
    }
    if (data.length < MAGIC.length + IV_BYTES || !data.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
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
      return JSON.parse(new TextDecoder().decode(plain)) as unknown;
    } catch {
      return undefined;
    }
  }

  /**
   * Seals and writes the entries: a new file created 0600 beside the old one, then renamed over it (a
   * reader sees the old file or the new one, never half of one). Failures are the caller's to ignore.
   */
  async write(content: unknown): Promise<void> {
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const sealed = await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: utf8.encode(this.name) },
      this.key,
      utf8.encode(JSON.stringify(content)),
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

/** A project's id (D58: a slug never has this shape); lower-cased, as the server writes ids. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Selections = Record<string, Snapshot>;

/**
 * The cached copy of one environment, by the project as the user named it (an id or a slug). `load` reads
 * it (through the slug's pointer when there is one), `save` keeps a selection: under the project's id
 * once an answer has told it, the slug's file then pointing there, so both names share one copy.
 */
export class EnvCache {
  private selections: Selections = {};
  /** The file the variables are in: `named`, or the id's file a slug's points to. */
  private data: PullCache;

  private constructor(
    private readonly named: PullCache,
    private readonly slug: string | undefined,
    private readonly env: string,
  ) {
    this.data = named;
  }

  static async open(dir: string, apiUrl: string, project: string, env: string, token: string): Promise<EnvCache> {
    const id = UUID.test(project) ? project.toLowerCase() : undefined;
    return new EnvCache(await PullCache.open(dir, apiUrl, id ?? project, env, token), id ? undefined : project, env);
  }

  async load(): Promise<void> {
    let content = await this.named.read();
    const pointer = (content as { project?: unknown } | undefined)?.project;
    if (this.slug !== undefined && typeof pointer === 'string' && UUID.test(pointer)) {
      this.data = await this.named.at(pointer);
      content = await this.data.read();
    }
    this.selections = this.selectionsOf(content);
  }

  get(selection: string): Snapshot | undefined {
    return this.selections[selection];
  }

  /** Keeps a selection; a cache that cannot be written is no reason to fail a pull (ADR 0016). */
  async save(selection: string, snapshot: Snapshot, projectId: string | undefined): Promise<void> {
    try {
      const id = projectId !== undefined && UUID.test(projectId) ? projectId.toLowerCase() : undefined;
      if (this.slug !== undefined && id !== undefined) {
        const target = await this.named.at(id);
        if (target.file !== this.data.file) {
          // The id's file may already hold what `-p <id>` pulled: kept beside this selection.
          this.selections = this.selectionsOf(await target.read());
          this.data = target;
        }
        this.selections[selection] = snapshot;
        await this.data.write({ v: 2, selections: this.selections });
        await this.named.write({ v: 2, project: id });
        return;
      }
      this.selections[selection] = snapshot;
      await this.data.write({ v: 2, selections: this.selections });
    } catch {
      // read-only home, full disk: the pull itself succeeded
    }
  }

  /** D42: a 401, 403 or 404 deletes the entry (and a slug's pointer with it). */
  remove(): void {
    this.named.remove();
    if (this.data !== this.named) this.data.remove();
  }

  /** A file's selections; one written before the variables were kept (one body per rendering) is read as such. */
  private selectionsOf(content: unknown): Selections {
    if (typeof content !== 'object' || content === null) return {};
    const { v, selections } = content as { v?: unknown; selections?: unknown };
    if (v === 2) return typeof selections === 'object' && selections !== null ? (selections as Selections) : {};
    if (v !== undefined) return {};
    const out: Selections = {};
    const old = content as Record<string, { etag: string; body: string; context?: string; confirmedAt: number }>;
    for (const [variant, e] of Object.entries(old)) {
      const [format, ...rest] = variant.split(';');
      const keys = rest.find((r) => r.startsWith('keys='));
      const rendering = { format, metadata: !rest.includes('no-metadata') } as Rendering;
      const selection = keys ?? 'all';
      const previous = out[selection];
      if (previous && previous.confirmedAt > e.confirmedAt) continue;
      const snap = snapshotOf({ rendering, env: this.env, ...e }, previous, e.confirmedAt);
      if (snap) out[selection] = snap;
    }
    return out;
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
