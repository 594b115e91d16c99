/**
 * The cost of reading an environment at a past revision (D44), for a large environment: 5,000 variables and
 * 10,000 revisions. The real server in this process (SQLite), driven over HTTP. The floor is the
 * same listing at the current state, which decrypts and masks the same 5,000 values; the figure is the
 * listing at an old, a middle and the latest revision beside it. The state at N is found with one index
 * step per key (services/variables/revisions.ts), so it should cost about the same whatever N is and however long
 * the history grows.
 */
import { performance } from 'node:perf_hooks';
import { createProject, signupUser, startApp, upsert } from '../server/test/harness.js';

const VARS = Number(process.env.BENCH_REV_VARS ?? 5000);
const REVISIONS = Number(process.env.BENCH_REV_REVISIONS ?? 10_000);
const SAMPLES = Number(process.env.BENCH_REV_SAMPLES ?? 15);

const app = await startApp({ env: { DEFAULT_PLAN: 'enterprise', LOG_LEVEL: 'warn' } });
try {
  const { jwt } = await signupUser(app);
  const p = await createProject(app, jwt, { name: 'big' });
  const base = `/v1/projects/${p.id}/envs/dev`;
  const seedStart = performance.now();
  await upsert(
    app,
    jwt,
    p.id,
    ['dev'],
    Array.from({ length: VARS }, (_, i) => ({ key: `VAR_${i}`, value: `value-${i}-${'x'.repeat(24)}`, type: 'plain' })),
  );
  // REVISIONS - 1 more single-key writes, four at a time (SQLite has one writer; each waits for its fsync).
  let next = 1;
  const writer = async () => {
    while (next < REVISIONS) {
      const i = next++;
      const res = await app.request('PUT', `${base}/vars/VAR_${(i * 7919) % VARS}`, {
        token: jwt,
        body: { value: `rev-${i}` },
      });
      if (res.status !== 200) throw new Error(`seed write ${i}: ${res.status} ${res.text}`);
    }
  };
  await Promise.all([writer(), writer(), writer(), writer()]);
  console.log(
    `seeded ${VARS} variables and ${REVISIONS} revisions in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
  );

  async function timed(path: string): Promise<number> {
    const times: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t = performance.now();
      const res = await app.request('GET', path, { token: jwt });
      times.push(performance.now() - t);
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text.slice(0, 200)}`);
    }
    return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
  }
  const floor = await timed(`${base}/vars`);
  const rows: [string, number][] = [
    ['listing at revision 1 (the bulk seed)', await timed(`${base}/vars?revision=1`)],
    [`listing at revision ${REVISIONS / 2}`, await timed(`${base}/vars?revision=${REVISIONS / 2}`)],
    [`listing at revision ${REVISIONS} (latest)`, await timed(`${base}/vars?revision=${REVISIONS}`)],
  ];
  const fmt = (label: string, ms: number) =>
    `${label.padEnd(44)} ${ms.toFixed(1).padStart(7)} ms   ${((ms / floor) * 100).toFixed(0).padStart(4)}% of floor`;
  console.log(`environment of ${VARS} variables, ${REVISIONS} revisions; median of ${SAMPLES} requests each`);
  console.log(fmt('floor: current listing (same 5,000 values)', floor));
  for (const [label, ms] of rows) console.log(fmt(label, ms));
} finally {
  await app.stop();
}
