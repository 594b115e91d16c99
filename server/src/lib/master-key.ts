import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const MASTER_KEY_FILE = 'master.key';

/**
 * D1: MASTER_KEY (base64 of 32 bytes) when given; otherwise, in embedded mode, DATA_DIR/master.key, created
 * with mode 0600 on first start. Returns whether the key was generated so the caller can warn once.
 */
export function loadMasterKey(opts: { masterKey?: string | undefined; dataDir: string; embedded: boolean }): {
  key: Buffer;
  generated: boolean;
  source: 'env' | 'file';
} {
  if (opts.masterKey) return { key: Buffer.from(opts.masterKey, 'base64'), generated: false, source: 'env' };
  if (!opts.embedded)
    throw new Error('MASTER_KEY is required when DATABASE_URL is set (every instance needs the same key)');
  const file = join(opts.dataDir, MASTER_KEY_FILE);
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file} does not hold base64 of 32 bytes`);
    return { key, generated: false, source: 'file' };
  }
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { key, generated: true, source: 'file' };
}
