/** D60/D62's pure pieces in the dashboard: "Allowed from" by the server's rule, actors, presets' snippets. */
import { describe, expect, it } from 'vitest';
import { actorKind } from '../src/lib/audit.js';
import { parseCidrList } from '../src/lib/cidrs.js';
import { hasPlaceholder, presetOf, snippet } from '../src/pages/identities/presets.js';

describe('parseCidrList (D62)', () => {
  it('splits on commas, spaces and new lines; empty is anywhere', () => {
    expect(parseCidrList('')).toEqual({ list: [] });
    expect(parseCidrList(' 10.0.0.0/8,\n2001:db8::/32  192.0.2.1 ')).toEqual({
      list: ['10.0.0.0/8', '2001:db8::/32', '192.0.2.1'],
    });
  });
  it('names the first bad entry and refuses more than 20', () => {
    expect(parseCidrList('10.0.0.0/33').error).toBe('10.0.0.0/33 is not an IPv4 or IPv6 address or CIDR range');
    expect(parseCidrList('::ffff:10.0.0.1/120').error).toMatch(/not an IPv4/);
    expect(parseCidrList(Array.from({ length: 21 }, (_, i) => `10.0.0.${i}`).join(',')).error).toBe(
      'at most 20 addresses or ranges',
    );
  });
});

describe('actorKind', () => {
  it('reads identity: and token: actors, and leaves people alone', () => {
    expect(actorKind('identity:gh-deploy')).toEqual({ kind: 'identity', name: 'gh-deploy' });
    expect(actorKind('token:ci')).toEqual({ kind: 'token', name: 'ci' });
    expect(actorKind('Ada Lovelace')).toEqual({ kind: 'user', name: 'Ada Lovelace' });
    expect(actorKind('identity:')).toEqual({ kind: 'user', name: 'identity:' });
  });
});

describe('identity presets (D60)', () => {
  it('finds the platform and writes its snippet with the id and audience', () => {
    expect(presetOf({ issuer: 'https://token.actions.githubusercontent.com', subject: null })).toBe('github');
    expect(presetOf({ issuer: 'https://gitlab.example.com', subject: null })).toBe('gitlab');
    expect(presetOf({ issuer: 'https://k8s.example', subject: 'system:serviceaccount:a:b' })).toBe('kubernetes');
    expect(presetOf({ issuer: 'https://idp.example', subject: 'x' })).toBe('custom');
    const gl = snippet('gitlab', 'https://svcenv.example', 'ID-1', 'aud-1');
    expect(gl).toContain('aud: aud-1');
    expect(gl).toContain('SVCENV_IDENTITY: ID-1');
    expect(gl).toContain('"$SVCENV_API_URL/v1/auth/oidc"');
    expect(hasPlaceholder('repo:<owner>/<repo>:*')).toBe(true);
    expect(hasPlaceholder('repo:acme/shop:*')).toBe(false);
  });
});
