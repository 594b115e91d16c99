import { describe, expect, it } from 'vitest';
import { guessType, previewDotenv } from '../src/lib/dotenv-preview.js';

const existing = new Map([
  [
    'dev',
    new Map<string, string | null>([
      ['DB_HOST', 'db.internal'],
      ['API_KEY', null], // a masked secret: its value is unknown, so it counts as updated
      ['PORT', '8080'],
    ]),
  ],
  ['staging', new Map<string, string | null>()],
]);

describe('pasted .env preview', () => {
  it('splits keys per environment into created, updated and unchanged', () => {
    const text = '# app\nexport DB_HOST=db.other\nAPI_KEY="k 1"\nPORT=8080\nNEW_ONE=\'x\'\n';
    const p = previewDotenv(text, ['dev', 'staging'], existing);
    expect(p).toEqual({
      ok: true,
      items: [
        { key: 'DB_HOST', value: 'db.other' },
        { key: 'API_KEY', value: 'k 1' },
        { key: 'PORT', value: '8080' },
        { key: 'NEW_ONE', value: 'x' },
      ],
      envs: [
        { env: 'dev', created: ['NEW_ONE'], updated: ['DB_HOST', 'API_KEY'], unchanged: ['PORT'] },
        { env: 'staging', created: ['DB_HOST', 'API_KEY', 'PORT', 'NEW_ONE'], updated: [], unchanged: [] },
      ],
    });
  });

  it('reads multi-line double-quoted values and keeps the last of duplicate keys', () => {
    const p = previewDotenv('CERT="line1\\nline2"\nA=1\nA=2\n', ['staging'], existing);
    expect(p.ok && p.items).toEqual([
      { key: 'CERT', value: 'line1\nline2' },
      { key: 'A', value: '2' },
    ]);
  });

  it('reports the line of a syntax error and never the value', () => {
    const p = previewDotenv('GOOD=1\nBAD LINE sk_live_secret\n', ['dev'], existing);
    expect(p.ok).toBe(false);
    if (!p.ok) {
      expect(p.line).toBe(2);
      expect(p.error).toContain('line 2');
      expect(p.error).not.toContain('sk_live_secret');
    }
  });

  it('refuses an empty paste and an over-long key before anything is sent', () => {
    expect(previewDotenv('# only a comment\n', ['dev'], existing)).toMatchObject({ ok: false, error: /No variables/ });
    expect(previewDotenv(`${'K'.repeat(257)}=1`, ['dev'], existing)).toMatchObject({ ok: false, error: /256/ });
  });

  it('an environment not loaded yet counts every key as new', () => {
    const p = previewDotenv('A=1', ['prod'], existing);
    expect(p.ok && p.envs).toEqual([{ env: 'prod', created: ['A'], updated: [], unchanged: [] }]);
  });
});

describe('the type an imported key is offered with', () => {
  it('guesses secret from credential-like names and URLs with a password, plain otherwise', () => {
    for (const key of [
      'API_KEY',
      'DB_PASSWORD',
      'GITHUB_TOKEN',
      'JWT_SECRET',
      'PRIVATE_KEY_PEM',
      'AWS_SECRET_ACCESS_KEY',
      'STRIPE_KEYS',
      'CLIENTSECRET',
      'SENTRY_DSN',
    ]) {
      expect(guessType(key, 'x'), key).toBe('secret');
    }
    for (const key of [
      'LOG_LEVEL',
      'PORT',
      'PUBLIC_URL',
      'DB_HOST',
      'MONKEY_MODE',
      'KEYBOARD_LAYOUT',
      'FEATURE_FLAGS',
    ]) {
      expect(guessType(key, 'info'), key).toBe('plain');
    }
    expect(guessType('DATABASE_URL', 'postgres://app:s3cret@db:5432/app')).toBe('secret');
    expect(guessType('DATABASE_URL', 'postgres://db:5432/app')).toBe('plain');
  });
});
