import { randomInt } from 'node:crypto';
import { DotenvParseError, parseDotenv, parseDotenvFull, parseSimpleDotenv, renderDotenv } from '@svcenv/contract';
import { describe, expect, it } from 'vitest';

const roundTrip = (entries: [string, string][]) => [...parseDotenv(renderDotenv(entries))];

describe('parseDotenv reads back renderDotenv (D30)', () => {
  it('round-trips tricky values', () => {
    const values = [
      '',
      'plain',
      'with space',
      ' leading and trailing ',
      'multi\nline\n',
      'crlf\r\nend',
      'quote " and \' single',
      'back\\slash\\n not a newline',
      'hash # not a comment',
      '#starts-with-hash',
      'trailing\\',
      '"already quoted"',
      "'single quoted'",
      'tab\tand\u0000nul\u007fdel',
      'unicode é 漢字 🙂 \u00a0nbsp \u2028ls',
      '${REF} $${LITERAL}',
      'a=b=c',
      'export NOT=A_KEY',
    ];
    const entries = values.map((v, i) => [`K${i}`, v] as [string, string]);
    expect(roundTrip(entries)).toEqual(entries);
  });

  it('round-trips random values', () => {
    const alphabet = [
      'a',
      'Z',
      '0',
      ' ',
      '\t',
      '\n',
      '\r',
      '"',
      "'",
      '\\',
      '#',
      '=',
      '$',
      '{',
      '}',
      'é',
      '\u0001',
      '🙂',
    ];
    for (let n = 0; n < 500; n++) {
      const entries: [string, string][] = [];
      for (let k = 0; k < 5; k++) {
        let v = '';
        for (let c = randomInt(0, 20); c > 0; c--) v += alphabet[randomInt(0, alphabet.length)];
        entries.push([`KEY_${k}`, v]);
      }
      expect(roundTrip(entries)).toEqual(entries);
    }
  });
});

describe('the fast path for simple lines', () => {
  it('reads exactly what the full reader reads, and leaves everything else to it', () => {
    const alphabet = [
      'a',
      'Z',
      '_',
      '0',
      '9',
      '=',
      ' ',
      ' ',
      '\n',
      '\n',
      '-',
      'é',
      '\u00a0',
      '\u2028',
      'export ',
      '.',
      '/',
    ];
    const pick = (chars: string[], max: number) => {
      let out = '';
      for (let c = randomInt(0, max); c > 0; c--) out += chars[randomInt(0, chars.length)];
      return out;
    };
    const valueChars = alphabet.filter((c) => c !== '\n');
    let simple = 0;
    for (let n = 0; n < 3000; n++) {
      // Mostly well-formed lines with odd spacing and values, some random junk lines.
      const rows = Array.from({ length: randomInt(1, 6) }, (_, k) =>
        randomInt(0, 10) < 8
          ? `${pick([' '], 3)}K_${k}${pick([' '], 2)}=${pick([' '], 2)}${pick(valueChars, 20)}`
          : pick(alphabet, 30),
      );
      const text = rows.join('\n') + (randomInt(0, 2) ? '\n' : '');
      let full: [string, string][] | 'error';
      try {
        full = [...parseDotenvFull(text)];
      } catch {
        full = 'error';
      }
      const fast = parseSimpleDotenv(text);
      if (fast === null) continue;
      simple++;
      expect([...fast], JSON.stringify(text)).toEqual(full);
    }
    expect(simple).toBeGreaterThan(1000); // the comparison above really ran
    const pulled = renderDotenv(Array.from({ length: 1000 }, (_, i) => [`SECRET_${i}`, `s${i}-${'x'.repeat(24)}`]));
    expect(parseSimpleDotenv(pulled)).not.toBeNull();
    expect([...parseDotenv(pulled)]).toEqual([...parseDotenvFull(pulled)]);
  });
});

describe('parseDotenv reads common hand-written forms', () => {
  it('export, single quotes, comments, blank lines, CRLF, inline comments', () => {
    const text = [
      '# a comment',
      '',
      'export A=1',
      "B='literal \\n $X # kept'",
      'C = spaced   # comment',
      'D=a#b',
      '  E="x" # after quotes',
      'F="multi',
      'line"',
      'G=crlf\r',
      'A=2',
    ].join('\n');
    expect(Object.fromEntries(parseDotenv(text))).toEqual({
      A: '2',
      B: 'literal \\n $X # kept',
      C: 'spaced',
      D: 'a#b',
      E: 'x',
      F: 'multi\nline',
      G: 'crlf',
    });
  });

  it('errors name the line and never the value', () => {
    const secret = 'sup3r-s3cret-value';
    for (const [text, line] of [
      [`OK=1\nA="${secret}`, 2],
      [`OK=1\n\n1BAD=${secret}`, 3],
      [`X="${secret}" trailing`, 1],
      [`NOEQUALS ${secret}`, 1],
    ] as const) {
      let err: unknown;
      try {
        parseDotenv(text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DotenvParseError);
      expect((err as DotenvParseError).line).toBe(line);
      expect((err as Error).message).not.toContain(secret);
    }
  });
});
