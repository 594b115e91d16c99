import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'check-citations.mjs');

// The checker also scans this file in the real tree, so citations that must fail in a fixture are
// assembled from parts rather than written out.
const cite = (...parts: string[]) => parts.join(' ');
const unknownDecision = ['D', '99'].join('');

const CONTRACT = [
  '# Contract',
  '- <a id="d1"></a>**D1** starts.',
  '### D28a',
  '1. <a id="spec-run-rule-7"></a>short values',
  '2. <a id="spec-run-rule-8"></a>split writes',
  '<a id="spec-errors"></a>',
  '1. <a id="guide-convention-11"></a>inject a clock',
  '',
].join('\n');

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** A fixture tree with the contract at docs/contract.md; a git work tree unless `git: false`. */
function fixture(files: Record<string, string>, { git = true } = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'svcenv-citations-'));
  roots.push(root);
  for (const [path, text] of Object.entries({ 'docs/contract.md': CONTRACT, ...files })) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  if (git) {
    for (const args of [
      ['init', '-q'],
      ['add', '.'],
    ]) {
      const r = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
    }
  }
  return root;
}

function check(root: string, contract?: string) {
  const args = [script, root, ...(contract ? [contract] : [])];
  const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

const resolvable = [
  '/**',
  ' * Starts as D1 says; context keys are D28a. Scrubbing follows spec run rules 7-8 and the',
  ' * error shape spec "Errors". Time comes from an injected clock (guide',
  ` * ${cite('convention', '11')}).`,
  ' */',
  'const colour = \'#D32F2F\'; // a hex colour, D3.js and 0xD2 are not citations, nor is spec "<Section>"',
  '',
].join('\n');

describe('scripts/check-citations.mjs', () => {
  it('passes a tree whose citations all resolve, wrapped across comment lines included', () => {
    const r = check(fixture({ 'src/a.ts': resolvable }));
    expect(r.err).toBe('');
    expect(r.status).toBe(0);
    // D1, D28a, the two run rules, the section and the convention.
    expect(r.out).toMatch(/6 citations in 1 files/);
  });

  it('fails on an unknown decision, naming file:line and the citation', () => {
    const r = check(fixture({ 'src/a.ts': resolvable, 'src/b.ts': `// fine\n// see ${unknownDecision}\n` }));
    expect(r.status).toBe(1);
    expect(r.err).toContain(`src/b.ts:2: ${unknownDecision}: no anchor #d99 in docs/contract.md`);
    expect(r.err).not.toContain('src/a.ts');
  });

  it('fails on a rule the contract does not have', () => {
    const r = check(fixture({ 'README.md': `Intro.\n\nAs ${cite('spec', 'run', 'rule', '11')} says.\n` }));
    expect(r.status).toBe(1);
    expect(r.err).toContain(`README.md:3: ${cite('spec', 'run', 'rule', '11')}: no anchor #spec-run-rule-11`);
  });

  it('fails on a rule cited without its section, suggesting the qualified form', () => {
    const r = check(fixture({ 'cli/scrub.ts': `\n\n// held back (${cite('rule', '8')})\n` }));
    expect(r.status).toBe(1);
    expect(r.err).toContain(`cli/scrub.ts:3: "${cite('rule', '8')}" is ambiguous`);
    const r2 = check(fixture({ 'x.md': `Per the ${cite('run', 'rule', '8')}.\n` }));
    expect(r2.err).toContain(`x.md:1: "${cite('rule', '8')}" is ambiguous: write "spec run rule 8"`);
    const hash = cite('guide', '#12');
    const r3 = check(fixture({ 'main.ts': `/**\n * One main (engineering ${hash}).\n */\n` }));
    expect(r3.err).toContain(`main.ts:2: "${hash}" is ambiguous: write "guide convention 12"`);
  });

  it('fails on an issue number, which a reader of the repository cannot follow', () => {
    const ref = cite('issue', '17');
    const r = check(fixture({ 'src/a.ts': resolvable, 'src/c.ts': `// hardened (${ref}, D1)\n` }));
    expect(r.status).toBe(1);
    expect(r.err).toContain(`src/c.ts:1: "${ref}" names an issue of the tracker`);
    const many = cite('Issues', '#3');
    const r2 = check(fixture({ 'docs/x.md': `See\n${many}.\n` }));
    expect(r2.err).toContain(`docs/x.md:2: "${many}" names an issue`);
  });

  it('fails on a numbered section item that does not say rule', () => {
    const r = check(fixture({ 'hook.ts': `// ${cite('spec', '"Delivery"', '3')}\n` }));
    expect(r.status).toBe(1);
    expect(r.err).toContain('hook.ts:1:');
    expect(r.err).toContain('write "spec delivery rule 3"');
  });

  it('ignores the contract itself, package-lock.json, dist/, binary and untracked files', () => {
    const bad = `${unknownDecision} and ${cite('rule', '8')}\n`;
    const files = { 'src/a.ts': resolvable, 'package-lock.json': bad, 'dist/out.js': bad, 'logo.png': `\0PNG ${bad}` };
    const root = fixture(files);
    writeFileSync(join(root, 'docs', 'contract.md'), `${CONTRACT}\nMentions ${bad}`);
    writeFileSync(join(root, 'untracked.md'), bad);
    const r = check(root);
    expect(r.err).toBe('');
    expect(r.status).toBe(0);
  });

  it('walks the directory when it is not a git work tree, and takes another contract path', () => {
    const root = fixture({ 'contract-elsewhere.md': CONTRACT, 'notes.md': `${unknownDecision}\n` }, { git: false });
    rmSync(join(root, 'docs'), { recursive: true });
    const r = check(root, 'contract-elsewhere.md');
    expect(r.status).toBe(1);
    expect(r.err).toContain(`notes.md:1: ${unknownDecision}: no anchor #d99 in contract-elsewhere.md`);
  });
});
