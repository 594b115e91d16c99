/** D63's pure pieces in the dashboard: the domains as typed, the callback address, sso_error reasons in words. */
import { SSO_ERRORS } from '@svcenv/contract';
import { describe, expect, it } from 'vitest';
import { ssoErrorWords } from '../src/lib/error-words.js';
import { callbackUri, parseDomains } from '../src/lib/sso.js';

describe('parseDomains', () => {
  it('splits on commas, spaces and new lines, drops a leading @, lower-cases, keeps each once', () => {
    expect(parseDomains('')).toEqual([]);
    expect(parseDomains(' Example.com, @acme.io\nexample.com;  corp.example.org ')).toEqual([
      'example.com',
      'acme.io',
      'corp.example.org',
    ]);
  });
});

describe('callbackUri', () => {
  it('is the origin with the callback path, one slash between', () => {
    expect(callbackUri('https://svcenv.example.com')).toBe('https://svcenv.example.com/v1/auth/sso/callback');
    expect(callbackUri('https://svcenv.example.com/')).toBe('https://svcenv.example.com/v1/auth/sso/callback');
  });
});

describe('ssoErrorWords', () => {
  it('has words for every reason of the contract, none of them the code itself', () => {
    for (const reason of SSO_ERRORS) {
      const words = ssoErrorWords(reason)!;
      expect(words.length).toBeGreaterThan(20);
      expect(words).not.toContain(reason);
    }
  });
  it('never echoes an unknown reason', () => {
    const words = ssoErrorWords('<script>alert(1)</script>')!;
    expect(words).toBe('Single sign-on did not complete. Try again, or ask a workspace Owner.');
    expect(ssoErrorWords('toString')).toBe(words);
    expect(ssoErrorWords(null)).toBeNull();
  });
});
