import { loadConfig } from './config.js';
import { migrate, openDb } from './db/index.js';
import { systemClock } from './lib/clock.js';
import { loadMasterKey } from './lib/master-key.js';
import { nodeSupported, unsupportedNodeMessage } from './lib/node-version.js';
import { adminResetLink } from './services/identity/password-reset.js';
import { type AdminResult, backup, grantAdmin, rewrapKeys, setPlan, verify } from './services/workspace/admin.js';

/**
 * Operator commands, run on the server host with the server's own environment (DATABASE_URL, MASTER_KEY,
 * DATA_DIR). See the README, "Operating".
 *
 *   npm run admin -- rewrap-keys          re-wraps every project key under NEW_MASTER_KEY (base64, 32 bytes)
 *   npm run admin -- set-plan <workspace id or slug> <free|team|enterprise>
 *   npm run admin -- reset-link <email>   prints a one-hour password reset link (D54)
 *   npm run admin -- grant-admin <email>  makes the account an administrator of the instance (D69)
 *   npm run admin -- backup <file>        a consistent copy of the embedded database, server running (D53)
 *   npm run admin -- verify               decrypts every stored value; exit 1 on any failure (D53)
 */
const usage = `usage:
  npm run admin -- rewrap-keys                       (reads NEW_MASTER_KEY; then restart with MASTER_KEY=<new>)
  npm run admin -- set-plan <workspace-id|slug> <free|team|enterprise>
  npm run admin -- reset-link <email>                (prints a one-hour password reset link; voids older ones)
  npm run admin -- grant-admin <email>               (makes the account an administrator of the instance)
  npm run admin -- backup <file>                     (a consistent copy of the embedded database, server running)
  npm run admin -- verify                            (decrypts every stored value; exit 1 on any failure)`;

async function main(argv: string[]): Promise<number> {
  if (!nodeSupported(process.versions.node)) {
    process.stderr.write(`${unsupportedNodeMessage(process.versions.node)}\n`);
    return 1;
  }
  const [command, ...args] = argv;
  if (!['rewrap-keys', 'set-plan', 'reset-link', 'grant-admin', 'backup', 'verify'].includes(command ?? '')) {
    process.stderr.write(`${usage}\n`);
    return 1;
  }
  const next = process.env.NEW_MASTER_KEY ? Buffer.from(process.env.NEW_MASTER_KEY, 'base64') : null;
  if (command === 'rewrap-keys' && next?.length !== 32) {
    process.stderr.write('NEW_MASTER_KEY must be base64 of exactly 32 bytes (e.g. `openssl rand -base64 32`)\n');
    return 1;
  }
  if (
    (command === 'set-plan' && args.length !== 2) ||
    ((command === 'reset-link' || command === 'grant-admin' || command === 'backup') && args.length !== 1) ||
    (command === 'verify' && args.length !== 0)
  ) {
    process.stderr.write(`${usage}\n`);
    return 1;
  }
  const config = loadConfig();
  if (command === 'backup') {
    // No migration, no master key: a copy of the file as it is.
    const result = await backup({ dataDir: config.DATA_DIR, databaseUrl: config.DATABASE_URL }, args[0]!);
    (result.ok ? process.stdout : process.stderr).write(`${result.message}\n`);
    return result.ok ? 0 : 1;
  }
  const master = loadMasterKey({
    masterKey: config.MASTER_KEY,
    dataDir: config.DATA_DIR,
    embedded: !config.DATABASE_URL,
  });
  const db = openDb({ dataDir: config.DATA_DIR, databaseUrl: config.DATABASE_URL });
  try {
    await migrate(db);
    let result: AdminResult;
    if (command === 'rewrap-keys') {
      const next = process.env.NEW_MASTER_KEY ? Buffer.from(process.env.NEW_MASTER_KEY, 'base64') : null;
      if (next?.length !== 32) {
        process.stderr.write('NEW_MASTER_KEY must be base64 of exactly 32 bytes (e.g. `openssl rand -base64 32`)\n');
        return 1;
      }
      result = await rewrapKeys(db, master.key, next, {
        dataDir: config.DATA_DIR,
        keyFromFile: master.source === 'file',
      });
    } else if (command === 'verify') {
      result = await verify(db.db, master.key);
    } else if (command === 'grant-admin') {
      result = await grantAdmin(db.db, args[0]!);
    } else if (command === 'reset-link') {
      result = await adminResetLink({ db: db.db, clock: systemClock, config }, args[0]!);
    } else {
      if (args.length !== 2) {
        process.stderr.write(`${usage}\n`);
        return 1;
      }
      result = await setPlan(db.db, args[0]!, args[1]!);
    }
    process.stdout.write(`${result.message}\n`);
    return result.ok ? 0 : 1;
  } finally {
    await db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`admin: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
