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

/** A small server that reads one way: routes -> services -> jobs -> runtime -> lib/db; a migration alone. */
const clean = {
  'server/src/lib/clock.ts': 'export const now = () => 1;\n',
  'server/src/db/schema.ts': 'export interface Row { id: string }\n',
  'server/src/db/migrations/2026-01-01T00-initial.ts':
    "import type { Kysely } from 'kysely';\ntype Dialect = 'sqlite' | 'postgres';\nexport async function up(db: Kysely<any>, d: Dialect) { return [db, d]; }\n",
  'server/src/runtime/cache.ts':
    "import type { Row } from '../db/schema.js';\nimport { now } from '../lib/clock.js';\nexport class Cache { rows: Row[] = []; at = now(); }\n",
  'server/src/jobs/queue.ts': "import { now } from '../lib/clock.js';\nexport const q = now;\n",
  'server/src/services/context.ts':
    "import { q } from '../jobs/queue.js';\nimport type { Cache } from '../runtime/cache.js';\nexport type Ctx = { q: typeof q; cache: Cache };\n",
  'server/src/services/vars.ts': "import { type Ctx } from './context.js';\nexport const list = (c: Ctx) => c;\n",
  'server/src/routes/vars.ts':
    "import { list } from '../services/vars.js';\nimport { z } from 'zod';\nexport { list, z };\n",
};

describe('scripts/check-layers.mjs', () => {
  it('passes code that reads one way', () => {
    const r = check(clean);
    expect(r.err).toBe('');
    expect(r.status).toBe(0);
  });

  it('fails on an import cycle in any package, naming the modules', () => {
    const r = check({
      ...clean,
      'web/src/pages/A.tsx': "import { b } from './B.js';\nexport const a = () => b;\n",
      'web/src/pages/B.tsx': "import { a } from './A.js';\nexport const b = () => a;\n",
    });
    expect(r.status).toBe(1);
    expect(r.err).toMatch(/import cycle: web\/src\/pages\/(A|B)\.tsx -> web\/src\/pages\/(B|A)\.tsx/);
  });

  it('counts type-only imports in a cycle, and names one circle of a larger knot', () => {
    const r = check({
      ...clean,
      'server/src/services/context.ts':
        "import type { Deps } from './deps.js';\nimport type { Cache } from '../runtime/cache.js';\nexport type Ctx = { deps: Deps; cache: Cache };\n",
      'server/src/services/deps.ts': "import type { Mfa } from './mfa.js';\nexport interface Deps { mfa: Mfa }\n",
      'server/src/services/mfa.ts':
        "import { type Ctx } from './context.js';\nimport type { Other } from './other.js';\nexport interface Mfa { ctx?: Ctx; o?: Other }\n",
      'server/src/services/other.ts': "import type { Ctx } from './context.js';\nexport type Other = Ctx;\n",
    });
    expect(r.status).toBe(1);
    expect(r.err).toContain(
      'import cycle: server/src/services/context.ts -> server/src/services/deps.ts -> server/src/services/mfa.ts -> server/src/services/context.ts (one of 4 modules importing each other)',
    );
  });

  it('fails when a lower server layer imports a higher one, a type import included', () => {
    const r = check({
      ...clean,
      'server/src/jobs/queue.ts': "import { list } from '../services/vars.js';\nexport const q = list;\n",
      'server/src/lib/clock.ts':
        "import type { Ctx } from '../services/context.js';\nexport const now = (c?: Ctx) => 1;\n",
    });
    expect(r.status).toBe(1);
    expect(r.err).toContain('server/src/jobs/queue.ts imports server/src/services/vars.ts');
    expect(r.err).toContain('server/src/lib/clock.ts imports server/src/services/context.ts');
  });

  it('keeps runtime below the services and jobs, and above lib and db', () => {
    const r = check({
      ...clean,
      'server/src/runtime/cache.ts':
        "import type { Ctx } from '../services/context.js';\nexport class Cache { c?: Ctx }\n",
    });
    expect(r.status).toBe(1);
    expect(r.err).toContain('server/src/runtime/cache.ts imports server/src/services/context.ts');
  });

  it('fails when a migration imports anything of the application', () => {
    const r = check({
      ...clean,
      'server/src/db/migrations/2026-01-02T00-more.ts':
        "import type { Kysely } from 'kysely';\nimport type { Row } from '../schema.js';\nexport async function up(db: Kysely<any>): Promise<Row[]> { return [db as never]; }\n",
    });
    expect(r.status).toBe(1);
    expect(r.err).toContain(
      'server/src/db/migrations/2026-01-02T00-more.ts imports ../schema.js: a migration imports nothing of the application',
    );
  });
});
