/**
 * Webhook isolation (ADR 0010). The real server (a child process, WEBHOOK_ALLOW_PRIVATE)
 * with a healthy receiver on loopback subscribed to var.update; PUTs of one variable each at a fixed rate
 * (open loop, BENCH_RATE a second, default 30, for BENCH_PHASE s, default 15). Each round runs two phases:
 *   floor:   a second receiver subscribed too, answering at once (so both phases deliver the same jobs);
 *   hanging: the second receiver accepts and never answers, so every attempt to it is cut at D35's 10 s.
 * Per phase: how many of the healthy receiver's deliveries arrived by the end of the phase (+ 1 s), their
 * latency from the PUT's answer to arrival (p50, p99), the PUT's own latency (p50, p99), and the p99 of a
 * GET /healthz sent between the PUTs (this machine is shared: that one moves with the neighbours' load, not
 * with the runner). After each round the second webhook is deleted (its backlog then finds it gone) and its
 * attempts in flight allowed to end; the next round subscribes a new one.
 * On SQLite, and on PostgreSQL when TEST_DATABASE_URL is set (a fresh schema); figures are medians over
 * BENCH_ROUNDS rounds (default 2).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createWebhookResponse } from '@svcenv/contract';
import { createProject, freshPgSchema, signupUser, startServer, upsert } from '../server/test/harness.js';
import { startReceiver } from '../server/test/receiver.js';

const RATE = Number(process.env.BENCH_RATE ?? 30);
const PHASE_S = Number(process.env.BENCH_PHASE ?? 15);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const N = Math.round(RATE * PHASE_S);

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]!;
};
const median = (xs: number[]) => pct(xs, 50);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Phase {
  delivered: number;
  deliveryP50: number;
  deliveryP99: number;
  putP50: number;
  putP99: number;
  /** GET /healthz at the same rate, half a period after each PUT: what the machine's load alone costs. */
  healthP99: number;
}

async function bench(dialect: string, databaseUrl?: string) {
  const healthy = await startReceiver();
  const second = await startReceiver();
  const srv = await startServer({
    env: {
      DEFAULT_PLAN: 'enterprise',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      LOG_LEVEL: 'warn',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl, MASTER_KEY: randomBytes(32).toString('base64') } : {}),
    },
  });
  try {
    const { jwt } = await signupUser(srv, 'Bench');
    const p = await createProject(srv, jwt, { name: 'bench' });
    const hook = async (url: string) => {
      const res = await srv.request('POST', '/v1/workspace/webhooks', {
        token: jwt,
        body: { name: 'bench', url, events: ['var.update'] },
        schema: createWebhookResponse,
      });
      if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${res.text}`);
      return res.body.id;
    };
    await hook(healthy.url('/ok'));

    /** N PUTs at RATE a second, each of its own variable (so a delivery names the PUT it came from). */
    async function phase(tag: string): Promise<Phase> {
      const keys = Array.from({ length: N }, (_, i) => `${tag}_${i}`);
      for (let i = 0; i < N; i += 1_000) {
        const items = keys.slice(i, i + 1_000).map((key) => ({ key, value: 'a', type: 'plain' }));
        await upsert(srv, jwt, p.id, ['dev'], items);
      }
      const answeredAt = new Map<string, number>();
      const putMs: number[] = [];
      const healthMs: number[] = [];
      const started = performance.now();
      const puts: Promise<void>[] = [];
      for (let i = 0; i < N; i++) {
        const due = started + (i * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        const key = keys[i]!;
        puts.push(
          (async () => {
            const t = performance.now();
            const res = await fetch(`${srv.url}/v1/projects/${p.id}/envs/dev/vars/${key}`, {
              method: 'PUT',
              headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
              body: JSON.stringify({ value: 'b' }),
            });
            await res.arrayBuffer();
            if (res.status !== 200) throw new Error(`PUT ${key}: ${res.status}`);
            putMs.push(performance.now() - t);
            answeredAt.set(key, Date.now());
          })(),
          (async () => {
            await sleep(500 / RATE);
            const t = performance.now();
            const res = await fetch(`${srv.url}/healthz`);
            await res.arrayBuffer();
            healthMs.push(performance.now() - t);
          })(),
        );
      }
      await Promise.all(puts);
      await sleep(1_000);
      const got = healthy.received.filter((r) => r.path === '/ok' && answeredAt.has(r.body.updated[0]!));
      const latency = got.map((r) => r.at - answeredAt.get(r.body.updated[0]!)!);
      return {
        delivered: got.length,
        deliveryP50: pct(latency, 50),
        deliveryP99: pct(latency, 99),
        putP50: pct(putMs, 50),
        putP99: pct(putMs, 99),
        healthP99: pct(healthMs, 99),
      };
    }

    // Warm-up: JIT, connections, caches.
    await phase('warm');
    const runs: { floor: Phase; hanging: Phase }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      second.setAnswer(() => ({ status: 200 }));
      const secondId = await hook(second.url(`/second-${r}`));
      const floor = await phase(`r${r}_floor`);
      second.setAnswer(() => ({ hangMs: 3_600_000 }));
      const withHang = await phase(`r${r}_hang`);
      await srv.request('DELETE', `/v1/workspace/webhooks/${secondId}`, { token: jwt });
      // Its attempts in flight end at their 10 s timeout; the rest of its queue finds the webhook gone.
      await sleep(11_000);
      runs.push({ floor, hanging: withHang });
    }
    const fig = (pick: (x: { floor: Phase; hanging: Phase }) => Phase, f: keyof Phase) =>
      median(runs.map((x) => pick(x)[f]));
    const line = (name: string, f: keyof Phase, unit: string) => {
      const a = fig((x) => x.floor, f);
      const b = fig((x) => x.hanging, f);
      console.log(
        `${dialect.padEnd(10)} ${name.padEnd(34)} ${`${b.toFixed(0)}${unit}`.padStart(9)}   floor (second receiver answering) ${`${a.toFixed(0)}${unit}`.padStart(9)}   ratio ${a > 0 ? (b / a).toFixed(2) : '-'}`,
      );
    };
    console.log(
      `${dialect}: ${N} PUTs at ${RATE}/s per phase, ${ROUNDS} rounds; hanging receiver cut at 10 s per attempt`,
    );
    line(`healthy deliveries of ${N} (by +1 s)`, 'delivered', '');
    line('healthy delivery latency p50', 'deliveryP50', ' ms');
    line('healthy delivery latency p99', 'deliveryP99', ' ms');
    line('PUT latency p50', 'putP50', ' ms');
    line('PUT latency p99', 'putP99', ' ms');
    line('GET /healthz p99 (machine noise)', 'healthP99', ' ms');
  } finally {
    await srv.stop();
    await healthy.stop();
    await second.stop();
  }
}

await bench('sqlite');
if (process.env.TEST_DATABASE_URL) {
  const schema = await freshPgSchema();
  try {
    await bench('postgres', schema.url);
  } finally {
    await schema.drop();
  }
} else {
  console.log('postgres: skipped (set TEST_DATABASE_URL to run it)');
}
console.log('targets: every healthy delivery within the phase, its p99 and the PUT p99 near the floor');
