/**
 * Streaming secret scrubber for `svcenv run` (spec run rules 6-8, ADR 0001-cli).
 *
 * Matching: one Aho-Corasick automaton over the UTF-8 bytes of every exposed value and of its common
 * encodings (D50, scrubForms: base64, percent, JSON, hex; they are just more byte strings, so no
 * second pass). Below, "value" means any of these patterns. Its transition table is dense over byte
 * classes (the distinct bytes that occur in some value, plus one class for all others) but filled
 * lazily: the patterns are sorted once, a trie state (with its failure link) is created the first time
 * a transition reaches it, a state gets its row of the table when a transition is first taken from it,
 * and a missing transition is computed through the failure links the first time it is taken, then
 * remembered. So building for 1,000 secrets (7,000 patterns) costs a sort and the prefilter's table,
 * about 10 ms, instead of a trie of 200,000 states and states x classes work and memory; and nothing
 * at all is built until the child writes something (`svcenv run -- true` never builds it).
 *
 * Skipping: running the automaton over every byte of a large output is the slow part, so a
 * Wu-Manber prefilter jumps between the positions where a value could start. Every value is at least
 * L bytes long (L = the shortest value's length, at most 32), so every occurrence starts with the
 * first L bytes of some value. A table of hashed 3-byte blocks says, for the block ending a window of
 * L bytes, how far the window can move without skipping such a start; only a window whose last block
 * ends some value's L-prefix and whose first two bytes begin some value is a candidate. The automaton
 * runs from a candidate, starting at the root (a partial match begun at an earlier window the
 * prefilter ruled out dies within that window, so it cannot matter), until every partial match it was
 * tracking that began at or before the candidate has died, then skipping resumes at the start of the longest partial match still alive. The bytes
 * of a write that the prefilter cannot judge (its last L-1) always go through the automaton, so the
 * state at the end of every write is exact.
 *
 * The matches found are exactly those of running the automaton over every byte, and the state at the
 * end of every write is exact, which is all the output depends on.
 *
 * Output: every byte of every occurrence is hidden, and each group of overlapping occurrences (sharing
 * a byte; merely adjacent ones stay apart) is written as one `***` where it starts. That is a function
 * of the whole output, so it is the same however the child's writes are split.
 *
 * Streaming rule: after each write, only the bytes that could still be the start of a match (the
 * automaton's current depth) are held back; everything before them is final and is emitted at once
 * (no later occurrence can start before them). A group that reaches past that point has had its `***`
 * written and may still grow.
 */

/** Spec run rule 7: values shorter than 6 characters are never scrubbed. */
export const MIN_SCRUB_LENGTH = 6;
const MASK = Buffer.from('***');
/** Block length of the prefilter (bytes hashed per window check). */
const BLOCK = 3;
/** Longest prefilter window: longer windows skip further but fill the shift table with more blocks. */
const MAX_WINDOW = 32;
/**
 * Shift table size, 2^bits one-byte entries: about 4 entries per hashed block (1,000 values of 32
 * bytes: 2^17, as before D50; with their encodings 2^20), so that few blocks collide and windows of
 * ordinary text still move far; never more than 1 MiB (half of this machine's L2 cache).
 */
const MIN_SHIFT_BITS = 10;
const MAX_SHIFT_BITS = 20;

/** Code points of `v`, at least `MIN_SCRUB_LENGTH` without counting them all when it is obvious. */
function longEnough(v: string): boolean {
  if (v.length >= 2 * MIN_SCRUB_LENGTH) return true; // a code point is at most two UTF-16 units
  let n = 0;
  for (const _ of v) n++;
  return n >= MIN_SCRUB_LENGTH;
}

const blockHash = (a: number, b: number, c: number, hashShift: number) =>
  Math.imul((a << 16) | (b << 8) | c, 0x9e3779b1) >>> hashShift;

const toBase64url = (b64: string) => b64.replaceAll('+', '-').replaceAll('/', '_');

/**
 * The strings scrubbed for one value (D50, spec run rule 8): the value itself and its common encodings
 * as a whole: standard and URL-safe base64, padded and not; percent-encoding as `encodeURIComponent`
 * writes it; the value as `JSON.stringify` writes it between the quotes; lower-case hex. Percent, JSON
 * and hex encode each character or byte on its own, so they are also found inside a longer encoded
 * text. Base64 is not: inside a longer base64 text (`Authorization: Basic` of `user:password`, a
 * base64 JSON document) the value starts at one of 3 byte alignments, and its first and last
 * characters there mix in bits of the neighbouring bytes. So for each alignment the characters that
 * depend on the value's bytes alone (at least 7 for 6 bytes, 42 bits) are a form too: the 1 or 2
 * characters either side stay visible. Duplicates (a plain alphanumeric value is its own percent and
 * JSON form) are left to the caller.
 */
export function scrubForms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const std = bytes.toString('base64');
  const url = bytes.toString('base64url'); // unpadded
  const forms = [value, bytes.toString('hex'), JSON.stringify(value).slice(1, -1)];
  forms.push(std, std.replace(/=+$/, ''), url, url.padEnd(std.length, '='));
  try {
    forms.push(encodeURIComponent(value));
  } catch {
    // A lone surrogate has no percent-encoding (URIError); it reaches the output as U+FFFD anyway.
  }
  for (let k = 0; k < 3; k++) {
    // Character j of a base64 text holds bits [6j, 6j+6): with the value at byte k, the characters
    // from ceil(4k/3) to floor(4(k+n)/3) hold nothing else (what the k bytes before hold is no matter).
    const enc = k === 0 ? std : Buffer.concat([bytes.subarray(0, k), bytes]).toString('base64');
    const core = enc.slice(Math.ceil((4 * k) / 3), Math.floor((4 * (k + bytes.length)) / 3));
    forms.push(core, toBase64url(core));
  }
  return forms;
}

/**
 * The automaton and the prefilter tables, built on first use. Nothing is built per state up front: the
 * patterns are sorted, so the strings below any trie state are a range of them (`lo`..`hi`, sharing its
 * first `depth` bytes), and a state is created the first time a transition reaches it, its child on a
 * byte found by binary search in its range. Ordinary text reaches a few thousand of the ~200,000 states
 * of 1,000 values with their encodings; building only sorts the patterns and fills the prefilter.
 */
class Tables {
  readonly classOf = new Int32Array(256);
  /** The byte of each class but 0 (class 0 is every byte that occurs in no pattern). */
  private readonly byteOf: Uint8Array;
  readonly width: number;
  /**
   * Transitions: (target state + 1) at [rowOf[state] + class], 0 while not yet computed. A state gets
   * its row the first time a transition is taken from it; until then rowOf is 0, a row of zeros that
   * is never written. Rows for every state would take states x classes x 4 bytes: ~80 MB for 1,000
   * values with their encodings (hex and base64 alphabets: ~70 classes, ~300 states per value), while
   * ordinary text only ever leaves a few shallow states.
   */
  go: Int32Array;
  /**
   * Per-state arrays, indexed by state id in order of creation. Sized for the most states there can be
   * (one per pattern byte, plus the root) so that they never move while the scanner holds them; only
   * the entries of created states are ever written, so the untouched rest costs no memory.
   */
  readonly rowOf: Int32Array;
  private rows = 1;
  private states = 1;
  /**
   * Failure links, (target + 1), 0 while not yet computed: a state's link (and its `out`) is computed
   * when a transition first reaches it.
   */
  private readonly fail1: Int32Array;
  private readonly parent: Int32Array;
  private readonly viaClass: Int32Array;
  /** The sorted patterns whose first `depth` bytes are the state's string: [lo, hi). */
  private readonly lo: Int32Array;
  private readonly hi: Int32Array;
  private readonly sorted: Buffer[];
  /** Length of the state's string: the longest suffix of the input that is a prefix of some value. */
  readonly depth: Int32Array;
  /**
   * Length of the longest value that ends at this state (0 if none), via failure links: exact for
   * every state a transition has reached (those are the only ones the scanner reads it for).
   */
  readonly out: Int32Array;
  /** Prefilter window length (bytes), at most the shortest value's length. */
  readonly window: number;
  /** Prefilter: how far a window may move given the hashed block ending it (0: maybe a candidate). */
  readonly shift: Uint8Array;
  /** Prefilter: a block's hash is its bits' top (32 - hashShift) bits (the shift table's index). */
  readonly hashShift: number;
  /** Prefilter: first two bytes of some value, as (b0 << 8 | b1). */
  readonly start2: Uint8Array;

  /** Longest value in bytes: the automaton's depth never exceeds it. */
  readonly maxLength: number;

  constructor(patterns: readonly Buffer[]) {
    let minLength = Number.POSITIVE_INFINITY;
    let maxLength = 0;
    let bytes = 0;
    const classOf = this.classOf;
    const byteOf = new Uint8Array(257);
    let width = 1;
    for (const p of patterns) {
      minLength = Math.min(minLength, p.length);
      maxLength = Math.max(maxLength, p.length);
      bytes += p.length;
      for (let i = 0; i < p.length; i++) {
        const b = p[i]!;
        if (classOf[b] === 0) {
          byteOf[width] = b;
          classOf[b] = width++;
        }
      }
    }
    this.maxLength = maxLength;
    this.width = width;
    this.byteOf = byteOf;
    this.sorted = patterns.slice().sort(Buffer.compare);
    const capacity = bytes + 1;
    this.depth = new Int32Array(capacity);
    this.out = new Int32Array(capacity);
    this.parent = new Int32Array(capacity);
    this.viaClass = new Int32Array(capacity);
    this.lo = new Int32Array(capacity);
    this.hi = new Int32Array(capacity);
    this.hi[0] = this.sorted.length;
    this.rowOf = new Int32Array(capacity);
    this.fail1 = new Int32Array(capacity);
    this.go = new Int32Array(64 * width);

    // The prefilter reads only each pattern's first L bytes; sorted, equal ones are neighbours (a
    // value's base64 forms share theirs), and only distinct ones are hashed or counted for the size.
    this.window = Math.min(minLength, MAX_WINDOW);
    const L = this.window;
    const firsts: Buffer[] = [];
    for (const p of this.sorted) {
      const last = firsts[firsts.length - 1];
      if (last === undefined || last.compare(p, 0, L, 0, L) !== 0) firsts.push(p);
    }
    const blocks = firsts.length * (L - BLOCK + 1);
    const bits = Math.min(MAX_SHIFT_BITS, Math.max(MIN_SHIFT_BITS, Math.ceil(Math.log2(4 * blocks))));
    this.hashShift = 32 - bits;
    const shift = new Uint8Array(1 << bits).fill(L - BLOCK + 1);
    const start2 = new Uint8Array(1 << 16);
    for (const p of firsts) {
      start2[(p[0]! << 8) | p[1]!] = 1;
      for (let j = BLOCK - 1; j < L; j++) {
        const h = blockHash(p[j - 2]!, p[j - 1]!, p[j]!, this.hashShift);
        shift[h] = Math.min(shift[h]!, L - 1 - j);
      }
    }
    this.shift = shift;
    this.start2 = start2;
  }

  /**
   * The trie child of `s` on class `c` (c > 0), created now, or -1. Called once per (s, c): its result
   * is kept in the transition table by next(), so a state is never created twice.
   */
  private child(s: number, c: number): number {
    const sorted = this.sorted;
    const d = this.depth[s]!;
    const b = this.byteOf[c]!;
    // In [lo, hi) every pattern starts with the state's d bytes; the one of exactly d bytes (the state's
    // own string) sorts first, then the rest by their byte at d. First the patterns whose byte at d is
    // at least b, then those past b.
    let a = this.lo[s]!;
    let z = this.hi[s]!;
    while (a < z) {
      const m = (a + z) >>> 1;
      const p = sorted[m]!;
      if (p.length <= d || p[d]! < b) a = m + 1;
      else z = m;
    }
    if (a === this.hi[s] || sorted[a]![d] !== b) return -1;
    const first = a;
    z = this.hi[s]!;
    while (a < z) {
      const m = (a + z) >>> 1;
      if (sorted[m]![d]! <= b) a = m + 1;
      else z = m;
    }
    const t = this.states++;
    this.depth[t] = d + 1;
    this.parent[t] = s;
    this.viaClass[t] = c;
    this.lo[t] = first;
    this.hi[t] = a;
    if (sorted[first]!.length === d + 1) this.out[t] = d + 1;
    return t;
  }

  /**
   * The failure link of `t` (the longest proper suffix of its string that is a state), computed once,
   * with out[t]. Its parent's link is known by then: a state is reached from its parent or through a
   * failure link, which is shallower, so the recursion is no deeper than a chain of failure links.
   */
  private failOf(t: number): number {
    if (t === 0) return 0;
    const known = this.fail1[t]!;
    if (known !== 0) return known - 1;
    const p = this.parent[t]!;
    const f = p === 0 ? 0 : this.next(this.failOf(p), this.viaClass[t]!);
    this.out[t] = Math.max(this.out[t]!, this.out[f]!);
    this.fail1[t] = f + 1;
    return f;
  }

  /**
   * The transition from `s` on byte class `c`, computed through the failure links once. The state it
   * returns has its failure link and `out` computed.
   */
  next(s: number, c: number): number {
    let row = this.rowOf[s]!;
    if (row === 0) {
      row = this.rows++ * this.width;
      if (row + this.width > this.go.length) {
        const grown = new Int32Array(this.go.length * 2);
        grown.set(this.go);
        this.go = grown;
      }
      this.rowOf[s] = row;
    }
    const v = this.go[row + c]!;
    if (v !== 0) return v - 1;
    let t = c === 0 ? -1 : this.child(s, c);
    if (t >= 0) this.failOf(t);
    else t = s === 0 ? 0 : this.next(this.failOf(s), c);
    this.go[row + c] = t + 1; // this.go, not a copy taken before: the recursion may have grown it
    return t;
  }
}

export class ScrubAutomaton {
  private kept: readonly string[] | undefined;
  private built: Tables | undefined;

  /**
   * `values` may be a function that lists them: it is called on first use, like the tables are built,
   * so a child that writes nothing costs no pass over thousands of values (bench/cli.bench.ts).
   */
  constructor(private readonly source: Iterable<string> | (() => Iterable<string>)) {}

  /** The values to scrub: distinct, each at least MIN_SCRUB_LENGTH characters. */
  get values(): readonly string[] {
    if (this.kept === undefined) {
      const kept: string[] = [];
      const all = typeof this.source === 'function' ? this.source() : this.source;
      for (const v of new Set(all)) if (longEnough(v)) kept.push(v);
      this.kept = kept;
    }
    return this.kept;
  }

  get empty(): boolean {
    return this.values.length === 0;
  }

  /** The automaton and prefilter, built on first use (a silent child never needs them). */
  get tables(): Tables {
    if (this.built === undefined) {
      const forms = new Set<string>();
      for (const v of this.values) for (const form of scrubForms(v)) forms.add(form);
      this.built = new Tables(Array.from(forms, (form) => Buffer.from(form, 'utf8')));
    }
    return this.built;
  }

  /** Fresh per-stream state: stdout and stderr are scrubbed independently. */
  stream(): ScrubStream {
    return new ScrubStream(this);
  }
}

/** A matched value as absolute byte offsets [start, end) into the stream. */
interface Span {
  start: number;
  end: number;
}

const EMPTY = Buffer.alloc(0);

export class ScrubStream {
  /** Automaton state after the last byte written. */
  private state = 0;
  /** Absolute offset of the next byte to be written. */
  private base = 0;
  /** Absolute offset of the first byte of `held`. */
  private heldStart = 0;
  private held: Buffer = EMPTY;
  /** Matches not yet written, sorted and disjoint. */
  private spans: Span[] = [];
  /** Where the last automaton run stopped (chunk offset) and its state: results of run(). */
  private stopAt = 0;
  private stopState = 0;
  /** Results of scan(), reused from write to write. */
  private candidates = new Int32Array(0);
  private tailStart = 0;

  constructor(private readonly automaton: ScrubAutomaton) {}

  /** Feeds a chunk; returns the output that is now final (possibly empty). */
  write(chunk: Uint8Array): Buffer {
    const parts: Uint8Array[] = [];
    this.push(chunk, parts);
    if (parts.length !== 1) return Buffer.concat(parts);
    const only = parts[0]!;
    return Buffer.from(only.buffer, only.byteOffset, only.byteLength);
  }

  /** End of stream: nothing can match any more, write out everything held. */
  end(): Buffer {
    const parts: Uint8Array[] = [];
    this.finish(parts);
    return Buffer.concat(parts);
  }

  /**
   * Feeds a chunk and appends the output that is now final to `parts`, without copying the chunk:
   * the parts may be views into `chunk`, valid as long as the caller keeps it unchanged.
   */
  push(chunk: Uint8Array, parts: Uint8Array[]): void {
    const n = chunk.length;
    if (n === 0) return;
    if (this.automaton.empty) {
      parts.push(chunk);
      return;
    }
    const tables = this.automaton.tables;
    const depth = tables.depth;
    // A plain Uint8Array view keeps the loops monomorphic (a Buffer is a subclass).
    const bytes = chunk instanceof Buffer ? new Uint8Array(chunk.buffer, chunk.byteOffset, n) : chunk;

    // Partial matches carried over from the previous write: follow them until they have all died.
    let doneAt = 0;
    let doneState = this.state;
    if (depth[doneState]! > 0) {
      this.run(tables, bytes, 0, doneState, -1);
      doneAt = this.stopAt;
      doneState = this.stopState;
    }
    let windowStart = doneAt - depth[doneState]!;
    if (doneAt < n) {
      // Every window start from windowStart on that could begin a value, in order; then the rest of
      // the chunk from the first window the prefilter could not judge (cut by the end of the chunk).
      const count = this.scan(tables, bytes, windowStart);
      const candidates = this.candidates;
      const tailStart = this.tailStart;
      for (let k = 0; k < count && doneAt < n; k++) {
        const candidate = candidates[k]!;
        // A candidate before the longest partial match still alive has died already.
        if (candidate < windowStart) continue;
        // Start at the candidate from the root (or continue where the last run stopped): a partial
        // match begun between there and the candidate began at a window the prefilter ruled out,
        // which cannot hold a value's first L bytes, so it dies inside that window without a match.
        // (Before D50 this re-entered maxLength bytes earlier; hex forms doubled maxLength.)
        const from = Math.max(doneAt, candidate);
        this.run(tables, bytes, from, from === doneAt ? doneState : 0, candidate);
        doneAt = this.stopAt;
        doneState = this.stopState;
        windowStart = doneAt - depth[doneState]!;
      }
      if (doneAt < n) {
        // The automaton must end the chunk in its exact state anyway.
        // Likewise from tailStart: every window before it lies in the chunk and was judged, so a
        // partial match still alive at the end of the chunk began at tailStart or later.
        const from = Math.max(doneAt, tailStart);
        this.run(tables, bytes, from, from === doneAt ? doneState : 0, n);
        doneAt = this.stopAt;
        doneState = this.stopState;
      }
    }
    this.state = doneState;
    this.base += n;
    this.emit(chunk, this.base - depth[doneState]!, parts);
  }

  /** End of stream: appends everything held to `parts`. */
  finish(parts: Uint8Array[]): void {
    this.state = 0;
    this.emit(EMPTY, this.base, parts);
  }

  /**
   * The prefilter: writes to this.candidates, in order, the window starts from `from` on that could
   * begin a value (every start of an actual value among them), and to this.tailStart the first window
   * start it could not judge because the window reaches past the chunk. Returns the count. Two halves
   * of the chunk are scanned in one loop: each step waits on its table lookup, and two independent
   * chains of lookups run almost twice as fast as one.
   */
  private scan(tables: Tables, bytes: Uint8Array, from: number): number {
    const { shift, start2, hashShift: hs } = tables;
    const L = tables.window;
    const n = bytes.length;
    if (this.candidates.length < n) this.candidates = new Int32Array(n);
    const out = this.candidates;
    // Lane a: window starts [from, mid); lane b: [mid, ...). pos is a window's last byte.
    const mid = from + ((n - from) >> 1);
    const twoLanes = mid + L - 1 < n;
    const aEnd = twoLanes ? mid + L - 1 : n;
    let a = from + L - 1;
    let b = twoLanes ? mid + L - 1 : n;
    let ka = 0;
    // Lane b's candidates go to the upper part of the array (at most one per window start).
    const bBase = mid - from;
    let kb = bBase;
    while (a < aEnd && b < n) {
      const sa = shift[blockHash(bytes[a - 2]!, bytes[a - 1]!, bytes[a]!, hs)]!;
      const sb = shift[blockHash(bytes[b - 2]!, bytes[b - 1]!, bytes[b]!, hs)]!;
      if (sa !== 0) a += sa;
      else {
        if (start2[(bytes[a - L + 1]! << 8) | bytes[a - L + 2]!] !== 0) out[ka++] = a - L + 1;
        a++;
      }
      if (sb !== 0) b += sb;
      else {
        if (start2[(bytes[b - L + 1]! << 8) | bytes[b - L + 2]!] !== 0) out[kb++] = b - L + 1;
        b++;
      }
    }
    while (a < aEnd) {
      const sa = shift[blockHash(bytes[a - 2]!, bytes[a - 1]!, bytes[a]!, hs)]!;
      if (sa !== 0) a += sa;
      else {
        if (start2[(bytes[a - L + 1]! << 8) | bytes[a - L + 2]!] !== 0) out[ka++] = a - L + 1;
        a++;
      }
    }
    while (b < n) {
      const sb = shift[blockHash(bytes[b - 2]!, bytes[b - 1]!, bytes[b]!, hs)]!;
      if (sb !== 0) b += sb;
      else {
        if (start2[(bytes[b - L + 1]! << 8) | bytes[b - L + 2]!] !== 0) out[kb++] = b - L + 1;
        b++;
      }
    }
    // With one lane, a ran to the end of the chunk; with two, a stopped at mid and b ran to the end.
    this.tailStart = Math.min((twoLanes ? b : a) - L + 1, n);
    if (kb > bBase) out.copyWithin(ka, bBase, kb);
    return ka + (kb - bBase);
  }

  /**
   * Runs the automaton over bytes[from..] starting in state `s`, reporting matches, and stops after
   * the first byte at which every partial match still alive started after `anchor` (or at the end).
   */
  private run(tables: Tables, bytes: Uint8Array, from: number, s: number, anchor: number): void {
    const { classOf, rowOf, depth, out } = tables;
    let go = tables.go;
    const n = bytes.length;
    let i = from;
    while (i < n) {
      const c = classOf[bytes[i]!]!;
      const v = go[rowOf[s]! + c]!;
      let t = v - 1;
      if (v === 0) {
        t = tables.next(s, c);
        go = tables.go; // may have grown
      }
      const len = out[t]!;
      const abs = this.base + i;
      if (len > 0) this.addSpan(abs + 1 - len, abs + 1);
      s = t;
      i++;
      if (i - depth[t]! > anchor) break;
    }
    this.stopAt = i;
    this.stopState = s;
  }

  /** Records a match; overlapping matches (not merely adjacent ones) become one span. */
  private addSpan(start: number, end: number): void {
    let s = start;
    let e = end;
    const spans = this.spans;
    while (spans.length > 0) {
      const last = spans[spans.length - 1]!;
      if (last.end <= s) break;
      s = Math.min(s, last.start);
      e = Math.max(e, last.end);
      spans.pop();
    }
    spans.push({ start: s, end: e });
  }

  /**
   * Appends the bytes from heldStart up to `cut` to `parts`: plain bytes as they are, `***` where a
   * span starts, nothing for the rest of a span. A span that reaches past `cut` stays (its `***` is
   * written; it may still grow). The bytes are `held` followed by `chunk`, which ends at this.base.
   */
  private emit(chunk: Uint8Array, cut: number, parts: Uint8Array[]): void {
    const spans = this.spans;
    let pos = this.heldStart;
    let k = 0;
    while (k < spans.length && spans[k]!.start < cut) {
      const span = spans[k]!;
      if (span.start >= pos) {
        if (span.start > pos) this.slice(pos, span.start, chunk, parts);
        parts.push(MASK);
      }
      pos = Math.max(pos, Math.min(span.end, cut));
      if (span.end > cut) break;
      k++;
    }
    if (cut > pos) this.slice(pos, cut, chunk, parts);
    if (k > 0) this.spans = spans.slice(k);
    // Copy what stays held: the chunk is the caller's, which it is free to reuse.
    const rest: Uint8Array[] = [];
    this.slice(cut, this.base, chunk, rest);
    this.held = rest.length === 0 ? EMPTY : Buffer.concat(rest);
    this.heldStart = cut;
  }

  /** Appends the bytes [a, b) (absolute) of held + chunk to `parts`, as views. */
  private slice(a: number, b: number, chunk: Uint8Array, parts: Uint8Array[]): void {
    const chunkStart = this.base - chunk.length;
    if (a < chunkStart) parts.push(this.held.subarray(a - this.heldStart, Math.min(b, chunkStart) - this.heldStart));
    if (b > chunkStart) parts.push(chunk.subarray(Math.max(a, chunkStart) - chunkStart, b - chunkStart));
  }
}
