/**
 * Streaming secret scrubber for `svcenv run` (spec run rules 6-8, ADR 0001-cli).
 *
 * One Aho-Corasick automaton over the UTF-8 bytes of every exposed value, compiled to a dense DFA so
 * the hot loop is two table loads per byte, whatever the number of secrets. Rows are indexed by byte
 * class (the distinct bytes that occur in some value, plus one class for all others), which keeps the
 * table a few times smaller than 256 columns for typical text secrets. Bytes rather than characters:
 * a multi-byte character split across two writes needs no special case.
 *
 * Streaming rule: after each byte, only the bytes that could still be the start of a match (the
 * automaton's current depth) are held back; everything before them is final and is emitted at once.
 * A match already passed by that boundary is written as `***` in full, so the output does not depend
 * on how the child's writes were split. Overlapping values inside the held window merge into one `***`.
 */

/** Spec run rule 7: values shorter than 6 characters are never scrubbed. */
export const MIN_SCRUB_LENGTH = 6;
const MASK = Buffer.from('***');

export class ScrubAutomaton {
  /**
   * The DFA: row[offset + classOf[byte]] is the next state's row offset (state * width), bitwise
   * negated when that state completes a value, so the hot loop needs no second lookup.
   */
  readonly row: Int32Array;
  readonly classOf: Int32Array;
  readonly width: number;
  /** Length of the state's string: the longest suffix of the input that is a prefix of some value. */
  readonly depth: Int32Array;
  /** Length of the longest value that ends at this state (0 if none), via failure links. */
  readonly out: Int32Array;
  readonly maxLength: number;

  constructor(values: Iterable<string>) {
    const patterns = [...new Set(values)]
      .filter((v) => [...v].length >= MIN_SCRUB_LENGTH)
      .map((v) => Buffer.from(v, 'utf8'));
    const classOf = new Int32Array(256);
    let width = 1;
    for (const p of patterns) for (const byte of p) if (classOf[byte] === 0) classOf[byte] = width++;
    // Trie first; at most (total bytes + 1) states.
    const capacity = patterns.reduce((sum, p) => sum + p.length, 0) + 1;
    const goto = new Int32Array(capacity * width).fill(-1);
    const depth = new Int32Array(capacity);
    const out = new Int32Array(capacity);
    let states = 1;
    for (const p of patterns) {
      let s = 0;
      for (const byte of p) {
        const idx = s * width + classOf[byte]!;
        if (goto[idx]! < 0) {
          goto[idx] = states;
          depth[states] = depth[s]! + 1;
          states++;
        }
        s = goto[idx]!;
      }
      out[s] = Math.max(out[s]!, p.length);
    }
    // Breadth-first: fill missing transitions from the failure state, so goto becomes a full DFA.
    const fail = new Int32Array(states);
    const queue = new Int32Array(states);
    let head = 0;
    let tail = 0;
    for (let b = 0; b < width; b++) {
      const t = goto[b]!;
      if (t < 0) goto[b] = 0;
      else {
        fail[t] = 0;
        queue[tail++] = t;
      }
    }
    while (head < tail) {
      const s = queue[head++]!;
      out[s] = Math.max(out[s]!, out[fail[s]!]!);
      for (let b = 0; b < width; b++) {
        const idx = s * width + b;
        const t = goto[idx]!;
        if (t < 0) goto[idx] = goto[fail[s]! * width + b]!;
        else {
          fail[t] = goto[fail[s]! * width + b]!;
          queue[tail++] = t;
        }
      }
    }
    const row = goto.slice(0, states * width);
    for (let i = 0; i < row.length; i++) row[i] = out[row[i]!]! > 0 ? ~(row[i]! * width) : row[i]! * width;
    this.row = row;
    this.classOf = classOf;
    this.width = width;
    this.depth = depth.slice(0, states);
    this.out = out.slice(0, states);
    this.maxLength = patterns.reduce((m, p) => Math.max(m, p.length), 0);
  }

  get empty(): boolean {
    return this.maxLength === 0;
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

export class ScrubStream {
  private state = 0;
  /** Absolute offset of the first byte of `held`. */
  private heldStart = 0;
  private held: Buffer = Buffer.alloc(0);
  /** Matches not yet written, sorted and disjoint. */
  private spans: Span[] = [];

  constructor(private readonly automaton: ScrubAutomaton) {}

  /** Feeds a chunk; returns the output that is now final (possibly empty). */
  write(chunk: Uint8Array): Buffer {
    if (this.automaton.empty) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const { row, depth, out, classOf, width } = this.automaton;
    const base = this.heldStart + this.held.length;
    // Hot loop: states are row offsets and a negative entry flags a state that completes a value.
    let s = this.state;
    // A plain Uint8Array view keeps the loop monomorphic (a Buffer is a subclass).
    const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const n = bytes.length;
    for (let i = 0; i < n; i++) {
      let t = row[s + classOf[bytes[i]!]!]!;
      if (t < 0) {
        t = ~t;
        const len = out[t / width]!;
        // The boundary before this byte decides which earlier matches were already final.
        this.addSpan(base + i + 1 - len, base + i + 1, base + i - depth[s / width]!);
      }
      s = t;
    }
    this.state = s;
    // A view, not a copy, of the chunk: emit() copies only the held tail.
    const view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const data = this.held.length === 0 ? view : Buffer.concat([this.held, view]);
    return this.emit(data, base + chunk.length - depth[s / width]!);
  }

  /** End of stream: nothing can match any more, write out everything held. */
  end(): Buffer {
    const end = this.heldStart + this.held.length;
    this.state = 0;
    return this.emit(this.held, end);
  }

  private addSpan(start: number, end: number, boundary: number): void {
    // Spans that began before the boundary were final before this byte: they stay as they are and
    // the new match is clipped after them. Later ones overlap the new match and merge with it.
    let s = start;
    let e = end;
    const spans = this.spans;
    while (spans.length > 0) {
      const last = spans[spans.length - 1]!;
      if (last.end <= s) break;
      if (last.start < boundary) {
        s = last.end;
        break;
      }
      s = Math.min(s, last.start);
      e = Math.max(e, last.end);
      spans.pop();
    }
    if (s < e) spans.push({ start: s, end: e });
  }

  /** Writes out `data` (which starts at heldStart) up to `boundary`, extended past spans it cuts. */
  private emit(data: Buffer, boundary: number): Buffer {
    const spans = this.spans;
    let cut = boundary;
    let k = 0;
    while (k < spans.length && spans[k]!.start < cut) {
      cut = Math.max(cut, spans[k]!.end);
      k++;
    }
    const parts: Buffer[] = [];
    let pos = this.heldStart;
    for (let j = 0; j < k; j++) {
      const span = spans[j]!;
      if (span.start > pos) parts.push(data.subarray(pos - this.heldStart, span.start - this.heldStart));
      parts.push(MASK);
      pos = span.end;
    }
    if (cut > pos) parts.push(data.subarray(pos - this.heldStart, cut - this.heldStart));
    if (k > 0) this.spans = spans.slice(k);
    // Copy the held tail: `data` may be the caller's chunk, which it is free to reuse.
    this.held = Buffer.from(data.subarray(cut - this.heldStart));
    this.heldStart = cut;
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }
}
