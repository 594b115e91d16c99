import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'check-architecture.mjs');

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

/** Runs the check on a temporary tree (not a git work tree, so every file counts). */
function check(files: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), 'svcenv-arch-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const r = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  return { status: r.status, err: r.stderr, out: r.stdout };
}

const tree = (body: string) => `# Architecture\n\n\`\`\`\n${body}\`\`\`\n`;
const sources = {
  'server/src/main.ts': '',
  'server/src/routes/vars.ts': '',
  'server/src/services/core/authz.ts': '',
  'web/src/main.tsx': '',
  'vitest.config.ts': '',
};

describe('scripts/check-architecture.mjs', () => {
  it('passes a tree that names every source folder, nested by indentation, with wrapped descriptions', () => {
    const r = check({
      ...sources,
      'ARCHITECTURE.md': tree(
        [
          'server/src/',
          '  main.ts              start-up',
          '  routes/              one file per URL area; words/with/slashes in a',
          '                       continued description are/not/paths',
          '    vars.ts            the variables',
          '  services/core/authz.ts  access',
          'web/src/main.tsx       the app',
          '',
        ].join('\n'),
      ),
    });
    expect(r.err).toBe('');
    expect(r.status).toBe(0);
    expect(r.out).toContain('4 source folders');
  });

  it('fails on a folder of source files that the tree does not name', () => {
    const r = check({
      ...sources,
      'server/src/lib/clock.ts': '',
      'ARCHITECTURE.md': tree('server/src/\n  main.ts\n  routes/\n  services/core/authz.ts\nweb/src/main.tsx\n'),
    });
    expect(r.status).toBe(1);
    expect(r.err).toContain('does not name server/src/lib/');
  });

  it('fails on an entry that does not exist, resolved below its parent folder', () => {
    const r = check({
      ...sources,
      'ARCHITECTURE.md': tree(
        'server/src/\n  main.ts\n  routes/\n    vars.ts\n    gone.ts   moved away\n  services/core/authz.ts\nweb/src/main.tsx\n',
      ),
    });
    expect(r.status).toBe(1);
    expect(r.err).toContain('ARCHITECTURE.md:8: names server/src/routes/gone.ts, which does not exist');
  });

  it('fails on an entry line that does not start with a path', () => {
    const r = check({
      ...sources,
      'ARCHITECTURE.md': tree(
        'server/src/\n  main.ts\n  routes/\n  services/core/authz.ts\nweb/src/main.tsx\nthe rest\n',
      ),
    });
    expect(r.status).toBe(1);
    expect(r.err).toContain('a tree entry should start with a path: the rest');
  });
});
