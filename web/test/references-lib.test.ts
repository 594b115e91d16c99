/** The dashboard's reading of references in all three forms (D49) and the `${` completion (pure). */
import { describe, expect, it } from 'vitest';
import {
  type CompletionSources,
  completions,
  crossReferences,
  openReference,
  references,
  referenceTargets,
  targetLabel,
} from '../src/lib/references.js';

describe('referenceTargets (D49)', () => {
  it('parses ${KEY}, ${env.KEY} and ${slug.env.KEY}, fallbacks included, each once', () => {
    const v = 'a ${KEY} ${staging.DB_HOST} ${shared-infra.prod.DB_HOST:-${dev.X}} ${KEY} $${lit.X}';
    expect(referenceTargets(v).map((t) => [t.project, t.env, t.key, t.withFallback])).toEqual([
      [null, null, 'KEY', false],
      [null, 'staging', 'DB_HOST', false],
      ['shared-infra', 'prod', 'DB_HOST', true],
      [null, 'dev', 'X', false],
    ]);
    expect(crossReferences(v).map(targetLabel)).toEqual(['staging.DB_HOST', 'shared-infra/prod.DB_HOST', 'dev.X']);
  });
  it('leaves what the server keeps literal: bad segments, four segments, a uuid as slug, unclosed', () => {
    expect(referenceTargets('${Staging.X} ${a.b.c.D} ${bad_slug.env.X} ${st.9X} ${dev.X')).toEqual([]);
    expect(referenceTargets('${12345678-1234-1234-1234-123456789abc.prod.K}')).toEqual([]);
    expect(referenceTargets('$${dev.X}')).toEqual([]);
  });
  it('keeps references() to the same environment', () => {
    expect(references('${A} ${dev.B} ${C:-x}').map((r) => r.key)).toEqual(['A', 'C']);
  });
});

describe('completion of ${', () => {
  const src = (loaded: [string, string[]][] = []): CompletionSources => ({
    keys: ['API_URL', 'DB_HOST'],
    envs: ['staging'],
    projects: [
      { slug: 'shared-infra', envs: ['prod'] },
      { slug: 'locked', envs: [] },
    ],
    loaded: new Map(loaded),
  });
  it('finds the open reference at the caret', () => {
    expect(openReference('x ${sta', 7)).toEqual({ start: 4, prefix: 'sta' });
    expect(openReference('x ${A} y', 8)).toBeNull();
    expect(openReference('$${sta', 6)).toBeNull();
    expect(openReference('${A:-${dev.', 11)).toEqual({ start: 7, prefix: 'dev.' });
  });
  it('offers keys, readable environments and projects with readable environments', () => {
    expect(completions('', src()).items.map((c) => c.insert)).toEqual([
      'API_URL',
      'DB_HOST',
      'staging.',
      'shared-infra.',
    ]);
    expect(completions('d', src()).items.map((c) => c.insert)).toEqual(['DB_HOST']);
  });
  it('asks for an environment key list only once its prefix is typed, then offers its keys', () => {
    expect(completions('staging.', src())).toEqual({ items: [], load: ['staging'] });
    const loaded = completions('staging.DB', src([['staging', ['DB_HOST', 'DB_USER', 'API']]]));
    expect(loaded).toEqual({
      items: [
        { insert: 'staging.DB_HOST', done: true },
        { insert: 'staging.DB_USER', done: true },
      ],
      load: [],
    });
    expect(completions('shared-infra.', src()).items).toEqual([{ insert: 'shared-infra.prod.', done: false }]);
    expect(completions('shared-infra.prod.', src()).load).toEqual(['shared-infra.prod']);
    expect(completions('locked.prod.', src())).toEqual({ items: [], load: [] });
    expect(completions('nope.', src())).toEqual({ items: [], load: [] });
  });
});
