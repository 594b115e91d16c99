import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'check-layers.mjs');

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function check(files: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), 'svcenv-layers-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const r = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  return { status: r.status, err: r.stderr };
}

/** A small server that reads one way: routes -> services -> jobs -> lib, with a type-only import back. */
const clean = {
  'server/src/lib/clock.ts': "import type { Ctx } from '../services/context.js';\nexport const now = () => 1;\n",
  'server/src/jobs/queue.ts': "import { now } from '../lib/clock.js';\nexport const q = now;\n",
  'server/src/services/context.ts': "import { q } from '../jobs/queue.js';\nexport type Ctx = { q: typeof q };\n",
  'server/src/services/vars.ts': "import { type Ctx } from './context.js';\nexport const list = (c: Ctx) => c;\n",
  'server/src/routes/vars.ts':
    "import { list } from '../services/vars.js';\nimport { z } from 'zod';\nexport { list, z };\n",
};

describe('scripts/check-layers.mjs', () => {
  it('passes code that reads one way, with type-only imports against the grain', () => {
    const r = check(clean);
    expect(r.err).toBe('');
    expect(r.status).toBe(0);
  });

  it('fails on a value import cycle in any package, naming the modules', () => {
    const r = check({
      ...clean,
      'web/src/pages/A.tsx': "import { b } from './B.js';\nexport const a = () => b;\n",
      'web/src/pages/B.tsx': "import { a } from './A.js';\nexport const b = () => a;\n",
    });
    expect(r.status).toBe(1);
    expect(r.err).toMatch(/value import cycle: web\/src\/pages\/(A|B)\.tsx -> web\/src\/pages\/(B|A)\.tsx/);
  });

  it('fails when a lower server layer imports a higher one', () => {
    const r = check({
      ...clean,
      'server/src/jobs/queue.ts': "import { list } from '../services/vars.js';\nexport const q = list;\n",
    });
    expect(r.status).toBe(1);
    expect(r.err).toContain('server/src/jobs/queue.ts imports server/src/services/vars.ts');
  });
});
