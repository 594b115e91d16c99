import { createHmac, randomBytes } from 'node:crypto';
import type { Db } from '../../db/index.js';
import { open, seal, sha256Hex } from '../../lib/crypto.js';
import { AppError, unauthorized } from '../../lib/errors.js';
import { newId, randomBase62 } from '../../lib/ids.js';
import { matchTotpStep, newTotpSecret, otpauthUrl } from '../../lib/totp.js';
import { recordChange } from '../core/changes.js';
import { actingAs, type Ctx } from '../core/context.js';
import type { AccountKeys, Deps } from '../core/deps.js';
import { userActor } from '../core/principal.js';
import { landingWorkspace } from '../workspace/team.js';
import { assertAccountNotLocked, recordAccountFailure } from './limits.js';

/**
 * TOTP two-factor authentication (spec "Two-factor authentication", D12, D13).
 *
 * The TOTP secret is sealed (AES-256-GCM) under a key derived from the master key and bound to the user
 * id, so a database dump alone does not yield it and a sealed secret copied to another user fails to open.
 * Every second factor is redeemed by one conditional write whose affected-row count decides, so a code is
 * accepted once even when many requests carry it at the same moment, on SQLite and PostgreSQL alike:
 * a TOTP code moves `users.mfa_last_step` forward (`... WHERE mfa_last_step < step`), a backup code is
 * deleted (`DELETE ... WHERE code_hash = ?`).
 */

/** Spec "Limits": the mfaToken lives 5 minutes. */
export const MFA_TOKEN_LIFETIME_MS = 5 * 60_000;
/** D13: after 5 wrong codes the mfaToken is void. */
export const MFA_MAX_ATTEMPTS = 5;
export const BACKUP_CODE_COUNT = 10;
const MFA_TOKEN_PREFIX = 'mfa_';

const secretAad = (userId: string) => `svcenv/mfa-secret/${userId}`;

/**
 * Backup codes: 12 characters of Crockford base32 (60 random bits), shown as `xxxx-xxxx-xxxx`. Typed
 * input is read leniently: case, spaces and dashes are ignored, and i/l and o read as 1 and 0.
 */
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const BACKUP_CODE_CHARS = 12;

function newBackupCode(): string {
  // 256 is a multiple of 32, so `byte & 31` is uniform.
  const raw = [...randomBytes(BACKUP_CODE_CHARS)].map((b) => CROCKFORD[b & 31]).join('');
  return `${raw.slice(0, 4)}-${raw.slice(4, 8)}-${raw.slice(8)}`;
}

function normalizeBackupCode(input: string): string | null {
  const s = input.toLowerCase().replace(/[\s-]/g, '').replace(/[il]/g, '1').replace(/o/g, '0');
  return s.length === BACKUP_CODE_CHARS && [...s].every((ch) => CROCKFORD.includes(ch)) ? s : null;
}

/**
 * Keyed digest (HMAC-SHA256 under a master-key-derived key) rather than a salted slow hash: the codes carry
 * 60 random bits, so a slow hash adds nothing against guessing online, while a deterministic digest lets a
 * code be found and deleted in one indexed conditional DELETE, which is what makes it single-use under
 * concurrency. The key means a leaked table cannot be searched offline without the master key.
 */
const backupCodeHash = (key: Buffer, normalized: string) => createHmac('sha256', key).update(normalized).digest('hex');

type SecondFactor = { kind: 'totp'; code: string } | { kind: 'backup'; hash: string } | { kind: 'malformed' };

function parseCode(keys: AccountKeys, code: string): SecondFactor {
  const trimmed = code.trim();
  if (/^\d{6}$/.test(trimmed)) return { kind: 'totp', code: trimmed };
  const backup = normalizeBackupCode(trimmed);
  return backup ? { kind: 'backup', hash: backupCodeHash(keys.backupCode, backup) } : { kind: 'malformed' };
}

interface MfaUser {
  id: string;
  email: string;
  mfa_enabled: number;
  mfa_secret_sealed: string | null;
}

async function loadUser(db: Db, userId: string): Promise<MfaUser & { session_version: number }> {
  const user = await db
    .selectFrom('users')
    .select(['id', 'email', 'mfa_enabled', 'mfa_secret_sealed', 'session_version'])
    .where('id', '=', userId)
    .executeTakeFirst();
  if (!user) throw unauthorized('invalid session');
  return user;
}

function openSecret(keys: AccountKeys, user: MfaUser): string {
  return open(keys.mfaSecret, user.mfa_secret_sealed!, secretAad(user.id)).toString('utf8');
}

/**
 * Redeems a TOTP or backup code inside `trx`: true when this call, and no other, accepted it. D13: a TOTP
 * code of a step already accepted (or an earlier one) is refused; a backup code is deleted on use.
 */
async function redeem(trx: Db, keys: AccountKeys, user: MfaUser, factor: SecondFactor, nowMs: number) {
  if (factor.kind === 'totp') {
    const step = matchTotpStep(openSecret(keys, user), factor.code, nowMs);
    if (step === null) return false;
    const r = await trx
      .updateTable('users')
      .set({ mfa_last_step: step })
      .where('id', '=', user.id)
      .where('mfa_enabled', '=', 1)
      .where((eb) => eb.or([eb('mfa_last_step', 'is', null), eb('mfa_last_step', '<', step)]))
      .executeTakeFirst();
    if (r.numUpdatedRows === 1n) return true;
    // A right code of a step already accepted: most often the one just used to enable two-factor or to log
    // in, typed again within its 30 seconds. Refused all the same (D13), but said so.
    throw new Rejected('used');
  }
  if (factor.kind === 'backup') {
    const r = await trx
      .deleteFrom('mfa_backup_codes')
      .where('user_id', '=', user.id)
      .where('code_hash', '=', factor.hash)
      .executeTakeFirst();
    return r.numDeletedRows === 1n;
  }
  return false;
}

/** Rolls a transaction back when the second factor was not accepted; `used`: a right code already accepted. */
class Rejected extends Error {
  constructor(readonly reason: 'wrong' | 'used' = 'wrong') {
    super(reason);
  }
}

async function replaceBackupCodes(trx: Db, keys: AccountKeys, userId: string, now: string): Promise<string[]> {
  const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
  await trx.deleteFrom('mfa_backup_codes').where('user_id', '=', userId).execute();
  await trx
    .insertInto('mfa_backup_codes')
    .values(
      codes.map((c) => ({
        user_id: userId,
        code_hash: backupCodeHash(keys.backupCode, normalizeBackupCode(c)!),
        created_at: now,
      })),
    )
    .execute();
  return codes;
}

/** A wrong code: audited (never the code itself, D36) and counted against the account (ADR 0003). */
async function codeFailed(
  deps: Deps,
  user: MfaUser,
  workspaceId: string | null,
  context: string,
  reason: 'wrong' | 'used' = 'wrong',
): Promise<never> {
  await recordAccountFailure(deps.limiter, user.email);
  if (workspaceId) {
    await recordChange(deps.db, actingAs(deps, userActor(user.id, workspaceId)), {
      action: 'auth.mfa_failed',
      detail: { context },
    });
  }
  if (reason === 'used') {
    throw unauthorized(
      'this code was already used; wait for the next code of your authenticator (a new one every 30 seconds)',
    );
  }
  throw unauthorized('invalid two-factor code');
}

const conflict = (message: string) => new AppError('CONFLICT', message);

/** D12 setup: a new secret, sealed, not yet enabled. Setting up again replaces a secret not yet enabled. */
export async function setupMfa(ctx: Ctx) {
  const { deps, principal } = ctx;
  const user = await loadUser(deps.db, principal.userId);
  if (user.mfa_enabled) throw conflict('two-factor authentication is already enabled; disable it first');
  const secret = newTotpSecret();
  const r = await deps.db
    .updateTable('users')
    .set({ mfa_secret_sealed: seal(deps.accountKeys.mfaSecret, Buffer.from(secret, 'utf8'), secretAad(user.id)) })
    .where('id', '=', user.id)
    .where('mfa_enabled', '=', 0)
    .executeTakeFirst();
  if (r.numUpdatedRows !== 1n) throw conflict('two-factor authentication is already enabled; disable it first');
  return { secret, otpauthUrl: otpauthUrl(secret, user.email) };
}

/** D12 enable: a current TOTP code turns two-factor on, returns 10 backup codes, ends older sessions (D9). */
export async function enableMfa(ctx: Ctx, input: { code: string }) {
  const { deps, principal } = ctx;
  const { code } = input;
  const user = await loadUser(deps.db, principal.userId);
  if (user.mfa_enabled) throw conflict('two-factor authentication is already enabled');
  if (!user.mfa_secret_sealed) throw conflict('start with POST /v1/me/mfa/setup');
  await assertAccountNotLocked(deps.limiter, user.email);
  const factor = parseCode(deps.accountKeys, code);
  const nowMs = deps.clock.now().getTime();
  const step = factor.kind === 'totp' ? matchTotpStep(openSecret(deps.accountKeys, user), factor.code, nowMs) : null;
  if (step === null) return codeFailed(deps, user, principal.workspaceId, 'enable');
  const now = new Date(nowMs).toISOString();
  const backupCodes = await deps.db.transaction().execute(async (trx) => {
    const r = await trx
      .updateTable('users')
      .set((eb) => ({
        mfa_enabled: 1,
        // The code that enabled two-factor cannot also complete a login (D13).
        mfa_last_step: step,
        session_version: eb('session_version', '+', 1),
      }))
      .where('id', '=', user.id)
      .where('mfa_enabled', '=', 0)
      .where('mfa_secret_sealed', '=', user.mfa_secret_sealed!)
      .executeTakeFirst();
    if (r.numUpdatedRows !== 1n) throw conflict('two-factor settings changed meanwhile; start again');
    const codes = await replaceBackupCodes(trx, deps.accountKeys, user.id, now);
    await recordChange(trx, ctx, { action: 'mfa.enable' });
    return codes;
  });
  return { backupCodes };
}

/**
 * Runs `work` in one transaction after redeeming a TOTP or backup code of the caller, whose two-factor must
 * be on; a wrong code is audited and counted against the account (codeFailed), and changes nothing.
 */
async function withSecondFactor<T>(
  ctx: Ctx,
  code: string,
  context: string,
  work: (trx: Db, user: MfaUser, now: Date) => Promise<T>,
): Promise<T> {
  const { deps, principal } = ctx;
  const user = await loadUser(deps.db, principal.userId);
  if (!user.mfa_enabled) throw conflict('two-factor authentication is not enabled');
  return redeemThen(deps, user, principal.workspaceId, code, context, work);
}

async function redeemThen<T>(
  deps: Deps,
  user: MfaUser,
  workspaceId: string | null,
  code: string,
  context: string,
  work: (trx: Db, user: MfaUser, now: Date) => Promise<T>,
): Promise<T> {
  await assertAccountNotLocked(deps.limiter, user.email);
  const factor = parseCode(deps.accountKeys, code);
  const now = deps.clock.now();
  try {
    return await deps.db.transaction().execute(async (trx) => {
      if (!(await redeem(trx, deps.accountKeys, user, factor, now.getTime()))) throw new Rejected();
      return work(trx, user, now);
    });
  } catch (e) {
    if (e instanceof Rejected) return codeFailed(deps, user, workspaceId, context, e.reason);
    throw e;
  }
}

/**
 * withSecondFactor for a user identified by something other than a session (a password reset link, D54):
 * the code must be theirs and two-factor on (else 401, like a wrong code, since the caller asked for it);
 * a wrong code is audited in `workspaceId` and counted against the account like every other.
 */
export async function withUserSecondFactor<T>(
  deps: Deps,
  user: { id: string; workspaceId: string | null },
  code: string,
  context: string,
  work: (trx: Db, now: Date) => Promise<T>,
): Promise<T> {
  const row = await loadUser(deps.db, user.id);
  if (!row.mfa_enabled) throw unauthorized('two-factor authentication is not enabled');
  return redeemThen(deps, row, user.workspaceId, code, context, (trx, _user, now) => work(trx, now));
}

/** D12 disable: a TOTP or backup code turns two-factor off and ends older sessions (D9). */
export async function disableMfa(ctx: Ctx, input: { code: string }): Promise<void> {
  await withSecondFactor(ctx, input.code, 'disable', async (trx, user) => {
    await trx
      .updateTable('users')
      .set((eb) => ({
        mfa_enabled: 0,
        mfa_secret_sealed: null,
        mfa_last_step: null,
        session_version: eb('session_version', '+', 1),
      }))
      .where('id', '=', user.id)
      .execute();
    await trx.deleteFrom('mfa_backup_codes').where('user_id', '=', user.id).execute();
    await trx.deleteFrom('mfa_challenges').where('user_id', '=', user.id).execute();
    await recordChange(trx, ctx, { action: 'mfa.disable' });
  });
}

/** D12: ten new backup codes for a TOTP or backup code; every older backup code stops working. */
export async function regenerateBackupCodes(ctx: Ctx, input: { code: string }) {
  const backupCodes = await withSecondFactor(ctx, input.code, 'backup-codes', async (trx, user, now) => {
    const codes = await replaceBackupCodes(trx, ctx.deps.accountKeys, user.id, now.toISOString());
    await recordChange(trx, ctx, { action: 'mfa.backup_codes_regenerate' });
    return codes;
  });
  return { backupCodes };
}

/**
 * The MFA-pending state of a login: an opaque random token (only its SHA-256 is stored) that nothing but
 * verify-mfa accepts; it is not a JWT, so every authenticated endpoint answers it with 401.
 */
export async function createMfaChallenge(deps: Pick<Deps, 'db' | 'clock'>, userId: string): Promise<string> {
  const token = MFA_TOKEN_PREFIX + randomBase62(43);
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    // Expired challenges are swept here rather than by a job: every login that makes one cleans up.
    await trx.deleteFrom('mfa_challenges').where('expires_at', '<=', now.toISOString()).execute();
    await trx
      .insertInto('mfa_challenges')
      .values({
        id: newId(),
        token_hash: sha256Hex(token),
        user_id: userId,
        expires_at: new Date(now.getTime() + MFA_TOKEN_LIFETIME_MS).toISOString(),
        created_at: now.toISOString(),
      })
      .execute();
  });
  return token;
}

/**
 * POST /v1/auth/verify-mfa, second-factor part: redeems the challenge of `mfaToken` with a TOTP code (current
 * step plus or minus one) or an unused backup code; accounts.ts issues the session. Each try first takes
 * one of the challenge's 5 attempts with a conditional UPDATE, so even concurrent guesses cannot exceed 5
 * per mfaToken (D13); the challenge is deleted in the transaction that redeems the code, so one mfaToken
 * yields at most one session.
 */
export async function redeemMfaChallenge(deps: Deps, input: { mfaToken: string; code: string }) {
  const now = deps.clock.now();
  const nowIso = now.toISOString();
  const invalid = () => unauthorized('invalid or expired mfaToken');
  if (!input.mfaToken.startsWith(MFA_TOKEN_PREFIX)) throw invalid();
  const challenge = await deps.db
    .selectFrom('mfa_challenges')
    .select(['id', 'user_id'])
    .where('token_hash', '=', sha256Hex(input.mfaToken))
    .where('expires_at', '>', nowIso)
    .executeTakeFirst();
  if (!challenge) throw invalid();
  const claimed = await deps.db
    .updateTable('mfa_challenges')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', challenge.id)
    .where('attempts', '<', MFA_MAX_ATTEMPTS)
    .where('expires_at', '>', nowIso)
    .executeTakeFirst();
  if (claimed.numUpdatedRows !== 1n) throw invalid();

  const user = await loadUser(deps.db, challenge.user_id);
  const workspaceId = await landingWorkspace(deps.db, user.id);
  await assertAccountNotLocked(deps.limiter, user.email);
  const factor = parseCode(deps.accountKeys, input.code);
  try {
    await deps.db.transaction().execute(async (trx) => {
      if (!workspaceId || !user.mfa_enabled) throw new Rejected();
      if (!(await redeem(trx, deps.accountKeys, user, factor, now.getTime()))) throw new Rejected();
      const done = await trx.deleteFrom('mfa_challenges').where('id', '=', challenge.id).executeTakeFirst();
      // Another request completed this challenge first (with a different valid code): undo this redemption.
      if (done.numDeletedRows !== 1n) throw new Rejected();
    });
  } catch (e) {
    if (!(e instanceof Rejected)) throw e;
    const reason = e.reason;
    // The fifth wrong code voids the token; the row goes now rather than at its expiry sweep.
    await deps.db
      .deleteFrom('mfa_challenges')
      .where('id', '=', challenge.id)
      .where('attempts', '>=', MFA_MAX_ATTEMPTS)
      .execute();
    return codeFailed(deps, user, workspaceId, 'login', reason);
  }
  return {
    userId: user.id,
    workspaceId: workspaceId!,
    sessionVersion: user.session_version,
    method: factor.kind as 'totp' | 'backup',
  };
}
