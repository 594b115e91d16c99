/**
 * The deployment files in docs/deploy and the Dockerfile, run or read as they are.
 *
 * nginx.conf: Debian's nginx with a throwaway certificate, on loopback ports, in front of a real server
 * process with TRUST_PROXY=true (D4), and the login rate limit (D14) seen through it: counted per client
 * address, which the server takes from the X-Forwarded-For nginx sets, so a client forging that header
 * through nginx stays counted under its own address. Skipped when nginx is absent, except under CI=true,
 * where .ci/run installs it and its absence fails.
 *
 * Dockerfile: no image can be built here (the base image's registry is out of reach), so the file is parsed
 * and checked: its two stages, the non-root USER, DATA_DIR=/data as the VOLUME, EXPOSE 8080, that every path
 * the runtime stage copies exists after a build, and its HEALTHCHECK command run against a real server.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer, outDir } from '../scripts/build.mjs';
import { freePort, repoRoot, type ServerProcess, signupUser, startServer } from './harness.js';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));
if (!NGINX && process.env.CI === 'true') {
  throw new Error('nginx is missing: apt-get install -y nginx (see .ci/run)');
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request over HTTP or HTTPS from a chosen loopback source address (each a different "client"). */
function send(
  url: string,
  opts: { method?: string; body?: unknown; headers?: Record<string, string>; from?: string; ca?: string } = {},
): Promise<Answer> {
  const u = new URL(url);
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const headers: Record<string, string> = { ...opts.headers };
  if (payload) headers['content-type'] = 'application/json';
  const request = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: opts.method ?? 'GET',
        headers,
        agent: false,
        ...(opts.from ? { localAddress: opts.from } : {}),
        ...(opts.ca ? { ca: opts.ca } : {}),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/** docs/deploy/nginx.conf with its ports, upstream and certificate paths replaced, each exactly once. */
function deployedNginxConf(replace: Record<string, string>): string {
  let conf = readFileSync(join(repoRoot, 'docs', 'deploy', 'nginx.conf'), 'utf8');
  for (const [from, to] of Object.entries(replace)) {
    expect(conf.split(from).length - 1, `"${from}" in docs/deploy/nginx.conf`).toBe(1);
    conf = conf.replace(from, to);
  }
  return conf;
}

describe.skipIf(!NGINX)('docs/deploy/nginx.conf: TLS at nginx, TRUST_PROXY=true at the server (D4, D14)', () => {
  let server: ServerProcess;
  let nginx: ChildProcess;
  let nginxLog = '';
  let dir: string;
  let cert: string;
  let httpsUrl: string;
  let httpUrl: string;
  let user: { email: string; password: string };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svcenv-nginx-'));
    // A throwaway certificate for 127.0.0.1, which the clients below verify (no rejectUnauthorized: false).
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    // nginx connects from 127.0.0.1; clients below come from 127.0.0.2-4.
    server = await startServer({ env: { TRUST_PROXY: 'true', TRUSTED_PROXIES: '127.0.0.1' } });
    user = await signupUser(server);
    const [httpsPort, httpPort] = [await freePort(), await freePort()];
    writeFileSync(
      join(dir, 'svcenv.conf'),
      deployedNginxConf({
        'server 127.0.0.1:8080;': `server ${new URL(server.url).host};`,
        'listen 80;': `listen 127.0.0.1:${httpPort};`,
        'listen 443 ssl;': `listen 127.0.0.1:${httpsPort} ssl;`,
        '/etc/ssl/svcenv/fullchain.pem': join(dir, 'cert.pem'),
        '/etc/ssl/svcenv/privkey.pem': join(dir, 'key.pem'),
      }),
    );
    // The rest of what a distribution's nginx.conf provides, in this directory.
    const root = process.getuid?.() === 0;
    writeFileSync(
      join(dir, 'nginx.conf'),
      `${root ? 'user root root;\n' : ''}worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/svcenv.conf;
}
`,
    );
    nginx = spawn(NGINX!, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    nginx.stdout!.on('data', (d) => {
      nginxLog += d;
    });
    nginx.stderr!.on('data', (d) => {
      nginxLog += d;
    });
    const deadline = Date.now() + 15_000;
    while (!(await listening(httpsPort))) {
      if (nginx.exitCode !== null || Date.now() > deadline) {
        const errors = existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '';
        throw new Error(`nginx did not start (exit ${nginx.exitCode}):\n${nginxLog}\n${errors}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    httpsUrl = `https://127.0.0.1:${httpsPort}`;
    httpUrl = `http://127.0.0.1:${httpPort}`;
  });

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const gone = new Promise((r) => nginx.once('exit', r));
      nginx.kill('SIGTERM');
      await gone;
    }
    await server?.stop();
  });

  const login = (base: string, from: string, headers: Record<string, string> = {}) =>
    send(`${base}/v1/auth/login`, {
      method: 'POST',
      body: { email: user.email, password: user.password },
      headers,
      from,
      ca: cert,
    });

  it('serves the API over verified TLS and sends plain HTTP to HTTPS', async () => {
    const health = await send(`${httpsUrl}/readyz`, { ca: cert });
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ ready: true });
    const redirect = await send(`${httpUrl}/v1/auth/session`);
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toMatch(/^https:\/\//);
  });

  it('counts logins per client address through nginx: a forged X-Forwarded-For does not escape the limit (D14)', async () => {
    // One client (127.0.0.2) claims a new address on every request; nginx replaces the header with the
    // address it saw, so all eleven count against 127.0.0.2 and the 11th is refused.
    const statuses: number[] = [];
    for (let i = 1; i <= 11; i++) {
      const r = await login(httpsUrl, '127.0.0.2', { 'x-forwarded-for': `203.0.113.${i}` });
      statuses.push(r.status);
      if (i === 11) {
        expect(JSON.parse(r.body).error.code).toBe('RATE_LIMIT');
        expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      }
    }
    expect(statuses).toEqual([...Array(10).fill(200), 429]);
    // Another client (127.0.0.3) through the same nginx, so the same peer at the server: its own count.
    // This is the X-Forwarded-For from the proxy at work: without it both would share nginx's address.
    expect((await login(httpsUrl, '127.0.0.3')).status).toBe(200);
    expect((await login(httpsUrl, '127.0.0.3', { 'x-forwarded-for': '127.0.0.2' })).status).toBe(200);
    // And the limited client stays limited whatever it claims.
    expect((await login(httpsUrl, '127.0.0.2', { 'x-forwarded-for': '127.0.0.3' })).status).toBe(429);
  });

  it("ignores a direct request's X-Forwarded-For: only the configured proxy's is believed (TRUSTED_PROXIES)", async () => {
    // A client that reaches the server's port itself, naming a new address on every login, is still counted
    // by its own address: the 11th login in the minute is 429 (D14).
    const statuses: number[] = [];
    for (let i = 1; i <= 11; i++) {
      statuses.push((await login(server.url, '127.0.0.4', { 'x-forwarded-for': `198.51.100.${i}` })).status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
    expect(statuses[10]).toBe(429);
  });
});

/** The Dockerfile's instructions: comments dropped, continuation lines joined, each with its stage. */
interface Instruction {
  stage: string;
  op: string;
  args: string;
}
function parseDockerfile(text: string): Instruction[] {
  const joined = text
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const out: Instruction[] = [];
  let stage = '';
  for (const line of joined.split('\n')) {
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const op = m[1]!.toUpperCase();
    const args = m[2]!.trim().replace(/\s+/g, ' ');
    if (op === 'FROM') stage = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? `#${out.length}`;
    out.push({ stage, op, args });
  }
  return out;
}

describe('Dockerfile and .dockerignore', () => {
  const instructions = parseDockerfile(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8'));
  const ignore = readFileSync(join(repoRoot, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const runtime = instructions.filter((i) => i.stage === 'runtime');
  const build = instructions.filter((i) => i.stage === 'build');
  const one = (op: string) => {
    const found = runtime.filter((i) => i.op === op);
    expect(found, op).toHaveLength(1);
    return found[0]!.args;
  };
  /** ENV of the runtime stage, both `ENV A=1 B=2` and `ENV A 1` forms. */
  const env = Object.fromEntries(
    runtime
      .filter((i) => i.op === 'ENV')
      .flatMap((i) =>
        i.args.includes('=') ? [...i.args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]) : [i.args.split(' ', 2)],
      ),
  ) as Record<string, string>;

  beforeAll(async () => {
    // What `npm ci` leaves (its postinstall builds both), so the COPY sources below are the build's outputs.
    await buildServer();
  }, 120_000);

  it('builds in a stage with npm ci and runs from a last stage of its own', () => {
    const froms = instructions.filter((i) => i.op === 'FROM');
    expect(froms.map((f) => f.stage)).toEqual(['build', 'runtime']);
    expect(build.some((i) => i.op === 'RUN' && /\bnpm ci\b/.test(i.args))).toBe(true);
    // The runtime stage installs nothing and copies only from the build stage, never the whole context.
    expect(runtime.filter((i) => i.op === 'RUN' && /\bnpm (ci|install|i)\b/.test(i.args))).toEqual([]);
    for (const c of runtime.filter((i) => i.op === 'COPY')) expect(c.args).toMatch(/^--from=build /);
    // The image's Node runs everything: the install skips the scripts, so the `node` package that the root
    // pins for machines without Node 24 does not fetch a second Node; the build it would skip runs after.
    const install = build.find((i) => i.op === 'RUN' && /\bnpm ci\b/.test(i.args))!.args;
    expect(install).toMatch(/\bnpm ci --ignore-scripts\b/);
    expect(install).toMatch(/&& npm run postinstall\b/);
    // Only production dependencies are copied: the build stage prunes the dev ones first.
    expect(build.some((i) => i.op === 'RUN' && /\bnpm prune --omit=dev\b/.test(i.args))).toBe(true);
  });

  it('runs as a non-root user, keeps DATA_DIR=/data on a volume, exposes 8080, starts the built server', () => {
    const user = one('USER');
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    const useradd = runtime.find((i) => i.op === 'RUN' && i.args.includes('useradd'))?.args ?? '';
    expect(useradd).toContain(`useradd`);
    expect(useradd).toMatch(new RegExp(`\\b${user.split(':')[0]}\\b`));
    expect(useradd).toMatch(/chown \S+ \/data/);
    expect(env.DATA_DIR).toBe('/data');
    expect(JSON.parse(one('VOLUME'))).toEqual(['/data']);
    expect(one('EXPOSE')).toBe('8080');
    expect(env.PORT).toBe('8080');
    expect(JSON.parse(one('CMD'))).toEqual(['node', 'dist/server/main.mjs']);
    expect(scriptsStart()).toBe(JSON.parse(one('CMD')).join(' ')); // the same thing `npm start` runs
  });

  it('copies into the runtime stage only paths a build leaves (npm ci, the CLI step creating dist/cli)', () => {
    const made = build
      .filter((i) => i.op === 'RUN')
      .flatMap((i) => [...i.args.matchAll(/mkdir -p (\S+)/g)].map((m) => m[1]!));
    const copies = runtime.filter((i) => i.op === 'COPY').map((i) => i.args.replace(/^--from=build /, '').split(' '));
    expect(copies.length).toBeGreaterThanOrEqual(5);
    for (const [src, dest] of copies) {
      expect(src, `COPY ${src}`).toMatch(/^\/app\//);
      const rel = src!.slice('/app/'.length);
      expect(existsSync(join(repoRoot, rel)) || made.includes(rel), `${rel} after a build`).toBe(true);
      expect(dest).toBeTruthy();
    }
    const sources = copies.map(([s]) => s);
    for (const needed of ['/app/dist/server', '/app/web/dist', '/app/node_modules', '/app/cli/package.json']) {
      expect(sources).toContain(needed);
    }
    // The server finds web/dist, dist/cli and cli/package.json from its own file: same layout in /app.
    for (const [src, dest] of copies) expect(join('/app', dest!)).toBe(src!.replace(/\/$/, ''));
  });

  it('keeps host builds, installs, databases and keys out of the build context', () => {
    for (const p of ['.git', 'node_modules', '**/node_modules', 'dist', 'web/dist', 'data', '**/master.key', '.env']) {
      expect(ignore).toContain(p);
    }
    // The sources the build needs are not ignored.
    for (const p of ['server', 'contract', 'web', 'cli', 'package.json', 'package-lock.json']) {
      expect(ignore.some((i) => i === p || i === `${p}/`)).toBe(false);
    }
  });

  it('HEALTHCHECK asks /readyz: 0 when the server is ready, 1 when it is not there (D52)', async () => {
    const hc = one('HEALTHCHECK');
    const cmd = JSON.parse(hc.slice(hc.indexOf('CMD ') + 4)) as string[];
    expect(cmd.join(' ')).toContain('/readyz');
    const run = (port: number) =>
      new Promise<number | null>((resolve) => {
        const c = spawn(process.execPath, cmd.slice(1), {
          env: { PATH: process.env.PATH ?? '', PORT: String(port) },
          stdio: 'ignore',
        });
        c.on('exit', (code) => resolve(code));
      });
    expect(cmd[0]).toBe('node');
    const port = await freePort();
    expect(await run(port)).toBe(1); // nothing listening
    const srv = await startServer({ env: { PORT: String(port) } });
    try {
      expect(await run(port)).toBe(0);
    } finally {
      await srv.stop();
    }
  });

  it("with the image's environment and neither TLS nor TRUST_PROXY, the server refuses 0.0.0.0 and says what to set (D4)", () => {
    expect(env.HOST).toBe('0.0.0.0');
    const r = spawnSync(process.execPath, [join(outDir, 'main.mjs')], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'svcenv-img-')) },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('HOST');
    expect(r.stderr).toContain('TRUST_PROXY');
  });
});

function scriptsStart(): string {
  return (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts
    .start;
}

const SYSTEMD_ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));

describe('docs/deploy/svcenv.service', () => {
  const unit = readFileSync(join(repoRoot, 'docs', 'deploy', 'svcenv.service'), 'utf8');
  const settings = (key: string) => [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]!.trim());

  it('runs the built server as its own user, DATA_DIR in its state directory, secrets from a file, hardened', () => {
    expect(settings('User')).toEqual(['svcenv']);
    // On the Node that npm ci installed beside the server (the root package pins it), not the host's.
    expect(settings('ExecStart')[0]).toMatch(
      /^\/opt\/svcenv\/node_modules\/\.bin\/node \/opt\/svcenv\/dist\/server\/main\.mjs$/,
    );
    expect(settings('EnvironmentFile')).toEqual(['/etc/svcenv/svcenv.env']);
    const env = settings('Environment');
    expect(env).toContain('DATA_DIR=/var/lib/svcenv');
    expect(settings('StateDirectory')).toEqual(['svcenv']);
    expect(env).toContain('HOST=127.0.0.1'); // behind nginx.conf's proxy_pass
    expect(env).toContain('TRUST_PROXY=true');
    expect(unit).not.toMatch(/^Environment=MASTER_KEY/m); // the key stays in the root-only file
    for (const [k, v] of [
      ['NoNewPrivileges', 'true'],
      ['ProtectSystem', 'strict'],
      ['ProtectHome', 'true'],
      ['PrivateTmp', 'true'],
      ['CapabilityBoundingSet', ''],
    ]) {
      expect(settings(k!), k).toEqual([v]);
    }
  });

  it.skipIf(!SYSTEMD_ANALYZE)('passes systemd-analyze verify without a warning', () => {
    // verify checks that ExecStart's program exists: the unit as installed in this checkout (/opt/svcenv being
    // where the README's install puts one), whose npm ci left the pinned Node in node_modules/.bin.
    const dir = mkdtempSync(join(tmpdir(), 'svcenv-unit-'));
    writeFileSync(join(dir, 'svcenv.service'), unit.replaceAll('/opt/svcenv', repoRoot));
    const r = spawnSync(SYSTEMD_ANALYZE!, ['verify', join(dir, 'svcenv.service')], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(`${r.stdout}${r.stderr}`.trim()).toBe('');
  });
});
