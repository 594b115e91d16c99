import { describe, expect, it } from 'vitest';
import { afterLogin } from '../src/lib/next.js';

describe('afterLogin (ADR 0014: a deep link survives the login, and only to this site)', () => {
  it('returns to a path of this site, with its query', () => {
    expect(afterLogin('/projects/abc?tab=revisions&env=prod')).toBe('/projects/abc?tab=revisions&env=prod');
    expect(afterLogin('/tokens')).toBe('/tokens');
  });
  it('goes to the projects for anything else', () => {
    for (const next of [
      null,
      '',
      'https://evil.example/x',
      '//evil.example/x',
      '/\\evil.example',
      'javascript:alert(1)',
    ]) {
      expect(afterLogin(next), String(next)).toBe('/projects');
    }
  });
});
