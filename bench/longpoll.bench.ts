/**
 * Held long-polls (D43): 10,000 pulls held by one instance (SQLite), each on its own connection
 * with `wait=60` and the current ETag. Prints the server's memory per held pull (resident set size before and
 * after, from /proc) and the plain pull throughput while they are held, beside the same throughput without
 * them (the floor of this benchmark, measured in the same run; target: at least 90% of it).
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import autocannon from 'autocannon';
import { createProject, createToken, signupUser, startServer, upsert } from '../server/test/harness.js';

const HELD = Number(process.env.BENCH_LONGPOLLS ?? 10_000);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const METRICS_TOKEN = 'bench-metrics-token-0123456789abcdef';

const srv = await startServer({
  env: {
    LOG_LEVEL: 'warn',
    METRICS_TOKEN,
    LONGPOLL_MAX_HELD: String(HELD * 2),
    LONGPOLL_MAX_PER_TOKEN: String(HELD * 2),
  },
});
const pid = srv.child.pid!;
const rssKb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
const held = async () => {
  const res = await fetch(`${srv.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  return Number(/^svcenv_longpolls_held (\d+)/m.exec(await res.text())?.[1] ?? 0);
};
const sockets: Socket[] = [];
try {
  const { jwt } = await signupUser(srv);
  const p = await createProject(srv, jwt);
  await upsert(
    srv,
    jwt,
    p.id,
    ['dev'],
    Array.from({ length: 100 }, (_, i) => ({ key: `VAR_${i}`, value: `value-${i}-${'x'.repeat(20)}`, type: 'plain' })),
  );
  const token = (await createToken(srv, jwt, { projectId: p.id })).token;
  const path = `/v1/projects/${p.id}/envs/dev/pull`;
  const etag = (await fetch(srv.url + path, { headers: { authorization: `Bearer ${token}` } })).headers.get('etag')!;
  const port = Number(new URL(srv.url).port);
  const load = async () => {
    const r = await autocannon({
      url: srv.url + path,
      connections: 10,
      duration: DURATION,
      headers: { authorization: `Bearer ${token}` },
    });
    return r.requests.average;
  };

  await load(); // warm-up
  const before = await load();
  const rssBefore = rssKb();
  const request = `GET ${path}?wait=60 HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\nif-none-match: ${etag}\r\n\r\n`;
  for (let i = 0; i < HELD; i++) {
    const s = connect(port, '127.0.0.1', () => s.write(request));
    s.on('error', () => {});
    sockets.push(s);
    if (i % 500 === 499) await new Promise((r) => setTimeout(r, 20));
  }
  for (let i = 0; i < 100 && (await held()) < HELD; i++) await new Promise((r) => setTimeout(r, 200));
  const nowHeld = await held();
  const rssAfter = rssKb();
  const during = await load();
  console.log(
    `long-poll benchmark: ${nowHeld} pulls held on one instance (SQLite), autocannon 10 connections, ${DURATION} s`,
  );
  console.log(`floor: plain pull, nothing held        ${before.toFixed(0).padStart(7)} req/s   100%`);
  console.log(
    `plain pull while ${nowHeld} are held    ${during.toFixed(0).padStart(7)} req/s   ${((during / before) * 100).toFixed(0).padStart(3)}%   (target >= 90%)`,
  );
  console.log(
    `server memory: ${(rssBefore / 1024).toFixed(0)} MB -> ${(rssAfter / 1024).toFixed(0)} MB, ${(((rssAfter - rssBefore) * 1024) / Math.max(1, nowHeld)).toFixed(0)} bytes per held pull (socket and request included)`,
  );
} finally {
  for (const s of sockets) s.destroy();
  await srv.stop('SIGKILL');
}
