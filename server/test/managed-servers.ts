/**
 * Database servers of a test's own, for what the machine's shared ones cannot show: their PostgreSQL trusts
 * every login from loopback (a wrong password logs in) and none of them speaks TLS. Here a PostgreSQL
 * cluster checks SCRAM-SHA-256 passwords and serves TLS, and a Redis serves TLS only, each on a free
 * loopback port, with a certificate authority made for the run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, until } from './harness.js';

export interface Certs {
  dir: string;
  /** PEM of the CA that signed the server certificate (CN localhost, SAN 127.0.0.1). */
  ca: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** A CA and a server certificate for 127.0.0.1 and localhost. */
export function makeCerts(): Certs {
  const dir = mkdtempSync(join(tmpdir(), 'svcenv-tls-'));
  const f = (n: string) => join(dir, n);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  ssl(
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=svcenv test CA'],
    ...['-keyout', f('ca.key'), '-out', f('ca.pem')],
  );
  ssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
  );
  writeFileSync(f('ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  ssl(
    ...['x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial'],
    ...['-days', '2', '-extfile', f('ext.cnf'), '-out', f('server.pem')],
  );
  return {
    dir,
    ca: readFileSync(f('ca.pem'), 'utf8'),
    caFile: f('ca.pem'),
    certFile: f('server.pem'),
    keyFile: f('server.key'),
  };
}

/** Whether something accepts TCP connections on the loopback port. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });

const PG_BIN = () => {
  const versions = execFileSync('ls', ['/usr/lib/postgresql']).toString().trim().split('\n');
  return `/usr/lib/postgresql/${versions.sort().at(-1)}/bin`;
};

/**
 * A PostgreSQL cluster of its own that checks passwords (SCRAM-SHA-256) and serves TLS; `postgres` is its
 * superuser with `password`. The cluster runs as the `postgres` system user, as PostgreSQL requires. It logs
 * every DDL statement (`log_statement = 'ddl'`, as an operator auditing role changes would): `statementLog()`
 * is what it logged so far, where a password sent in a statement would be.
 */
export async function startScramPostgres(certs: Certs): Promise<{
  port: number;
  password: string;
  statementLog(): string;
  stop(): Promise<void>;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'svcenv-pg-'));
  const data = join(dir, 'data');
  const password = `pg${Math.random().toString(36).slice(2)}`;
  writeFileSync(join(dir, 'pw'), password);
  // The server's key must be the cluster owner's and not readable by others.
  for (const [from, to] of [
    [certs.certFile, 'server.pem'],
    [certs.keyFile, 'server.key'],
  ] as const) {
    writeFileSync(join(dir, to), readFileSync(from));
  }
  chmodSync(join(dir, 'server.key'), 0o600);
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
  for (const p of [dir, join(dir, 'pw'), join(dir, 'server.pem'), join(dir, 'server.key')]) chownSync(p, uid, gid);
  const asPostgres = (cmd: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', `${PG_BIN()}/${cmd}`, ...args], { stdio: 'pipe' });
  asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${join(dir, 'pw')}`]);
  const port = await freePort();
  const child = spawn(
    'runuser',
    [
      ...['-u', 'postgres', '--', `${PG_BIN()}/postgres`, '-D', data, '-p', String(port), '-k', dir],
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'ssl=on', '-c', 'fsync=off'],
      ...['-c', 'log_statement=ddl', '-c', 'logging_collector=on', '-c', `log_directory=${join(dir, 'log')}`],
      ...['-c', 'log_filename=statements.log'],
      ...['-c', `ssl_cert_file=${join(dir, 'server.pem')}`, '-c', `ssl_key_file=${join(dir, 'server.key')}`],
    ],
    { stdio: 'ignore' },
  );
  await until(`PostgreSQL on 127.0.0.1:${port}`, () => listening(port), 30_000);
  return {
    port,
    password,
    statementLog: () => {
      const file = join(dir, 'log', 'statements.log');
      return existsSync(file) ? readFileSync(file, 'utf8') : '';
    },
    async stop() {
      // runuser does not pass a signal on: pg_ctl stops the postmaster, and runuser ends with it.
      const exited = new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)));
      asPostgres('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Redis that speaks TLS only (no plain port), `default` user off and an admin with `password`. */
export async function startTlsRedis(certs: Certs): Promise<{
  port: number;
  username: string;
  password: string;
  stop(): Promise<void>;
}> {
  const port = await freePort();
  const username = 'tls_admin';
  const password = `rd${Math.random().toString(36).slice(2)}`;
  const child = spawn(
    'redis-server',
    [
      ...['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      ...['--tls-cert-file', certs.certFile, '--tls-key-file', certs.keyFile, '--tls-ca-cert-file', certs.caFile],
      ...['--tls-auth-clients', 'no', '--user', 'default', 'off'],
      ...['--user', username, 'on', `>${password}`, '~*', '&*', '+@all'],
    ],
    { stdio: 'ignore' },
  );
  await until(`Redis on 127.0.0.1:${port}`, () => listening(port), 30_000);
  return {
    port,
    username,
    password,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}
