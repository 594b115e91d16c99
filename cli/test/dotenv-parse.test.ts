import { randomInt } from 'node:crypto';
import { DotenvParseError, parseDotenv, renderDotenv } from '@svcenv/contract';
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
