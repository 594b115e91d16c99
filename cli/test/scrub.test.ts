import { randomBytes, randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ScrubAutomaton } from '../src/scrub.js';

function scrub(secrets: string[], parts: (string | Buffer)[]): string {
  const s = new ScrubAutomaton(secrets).stream();
  const out = parts.map((p) => s.write(typeof p === 'string' ? Buffer.from(p) : p));
  return Buffer.concat([...out, s.end()]).toString('utf8');
}

/** Every way of cutting `text` into single bytes, and a few random cuts. */
function splits(text: string): Buffer[][] {
  const b = Buffer.from(text);
  const ways: Buffer[][] = [[b], [...b].map((x) => Buffer.from([x]))];
  for (let n = 0; n < 20; n++) {
    const parts: Buffer[] = [];
    for (let i = 0; i < b.length; ) {
      const len = randomInt(1, 5);
      parts.push(b.subarray(i, i + len));
      i += len;
    }
    ways.push(parts);
  }
  return ways;
}

describe('scrubber (run rules 6-8)', () => {
  it('replaces a value, also when split across writes', () => {
    for (const parts of splits('token=hunter2hunter2; again hunter2hunter2.')) {
      expect(scrub(['hunter2hunter2'], parts)).toBe('token=***; again ***.');
    }
  });

  it('leaves values shorter than 6 characters alone, scrubs 6', () => {
    expect(scrub(['abcde', 'abcdef'], ['abcde abcdef abcdefg'])).toBe('abcde *** ***g');
    expect(scrub(['ééééé'], ['ééééé'])).toBe('ééééé');
  });

  it('merges overlapping and nested values, whatever the write sizes', () => {
    const secrets = ['abcdef', 'defghi', 'bcdefg', 'abcdefghijkl'];
    for (const parts of splits('x abcdefghi y abcdefghijkl z bcdefg')) {
      expect(scrub(secrets, parts)).toBe('x *** y *** z ***');
    }
  });

  it('holds back only a possible partial match', () => {
    const s = new ScrubAutomaton(['secret-value']).stream();
    expect(s.write(Buffer.from('hello secr')).toString()).toBe('hello ');
    expect(s.write(Buffer.from('ets')).toString()).toBe('secret'); // the final s could start one
    expect(s.write(Buffer.from('.')).toString()).toBe('s.');
    expect(s.write(Buffer.from('prompt> ')).toString()).toBe('prompt> ');
    expect(s.write(Buffer.from('secret-val')).toString()).toBe('');
    expect(s.write(Buffer.from('ue!')).toString()).toBe('***!');
  });

  it('scrubs multi-byte and multi-line values split inside a character', () => {
    const value = 'пароль-🙂\nline two';
    const buf = Buffer.from(`a ${value} b`);
    for (let cut = 1; cut < buf.length; cut++) {
      expect(scrub([value], [buf.subarray(0, cut), buf.subarray(cut)])).toBe('a *** b');
    }
  });

  it('handles 1,000 secrets like a naive replace would', () => {
    const secrets = Array.from({ length: 1000 }, () => randomBytes(randomInt(6, 40)).toString('base64url'));
    let text = '';
    const expected: string[] = [];
    for (let i = 0; i < 300; i++) {
      const filler = `line ${i} ok;`;
      const s = secrets[randomInt(0, secrets.length)]!;
      text += `${filler}[${s}]\n`;
      expected.push(`${filler}[***]\n`);
    }
    for (const parts of splits(text).slice(0, 5)) expect(scrub(secrets, parts)).toBe(expected.join(''));
  });

  it('passes output through untouched when nothing is in scope', () => {
    expect(scrub([], ['anything at all'])).toBe('anything at all');
  });
});
