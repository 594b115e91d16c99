import type { Db } from '../../db/index.js';
import { AppError } from '../../lib/errors.js';

/**
 * D63: what single sign-on changes for password accounts (ADR 0025). Apart from services/identity/sso.ts so
 * that accounts.ts can ask it without the two importing each other.
 */

/**
 * The stored hash of an account made by single sign-on, which has no password until D54's reset sets one.
 * Not an argon2 string, so nothing verifies against it: password login refuses it as a wrong password.
 */
export const NO_PASSWORD_HASH = '!sso-no-password';

/** The domain of an address, lower-cased (the part after the last `@`). */
export const emailDomain = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

/** The workspace that claims the address's domain, and whether it enforces single sign-on. */
export async function ssoClaimOf(db: Db, email: string): Promise<{ workspaceId: string; enforce: boolean } | null> {
  const row = await db
    .selectFrom('sso_domains as d')
    .innerJoin('workspace_sso as s', 's.workspace_id', 'd.workspace_id')
    .select(['s.workspace_id', 's.enforce'])
    .where('d.domain', '=', emailDomain(email))
    .executeTakeFirst();
  return row ? { workspaceId: row.workspace_id, enforce: row.enforce === 1 } : null;
}

const ssoRequired = () =>
  new AppError(
    'SSO_REQUIRED',
    'this address\'s workspace signs in with single sign-on: use "Sign in with SSO" (its Owners keep password login)',
    'email',
  );

/**
 * D63: with `enforce`, a password login in a claimed domain is refused 403 SSO_REQUIRED unless the account is
 * an Owner of the claiming workspace and its password is right. Decided after the password was checked, and
 * the same answer for an unknown address, a Member, and an Owner with a wrong password, so the refusal tells
 * neither whether an account exists, nor who the Owners are, nor whether a guessed password was right.
 */
export async function assertPasswordLoginAllowed(
  db: Db,
  email: string,
  user: { id: string } | undefined,
  passwordOk: boolean,
): Promise<void> {
  const claim = await ssoClaimOf(db, email);
  if (!claim?.enforce) return;
  if (user && passwordOk) {
    const owner = await db
      .selectFrom('workspace_members')
      .select('user_id')
      .where('workspace_id', '=', claim.workspaceId)
      .where('user_id', '=', user.id)
      .where('ws_role', '=', 'Owner')
      .executeTakeFirst();
    if (owner) return;
  }
  throw ssoRequired();
}

/**
 * ADR 0025: with `enforce`, a sign-up with an address in a claimed domain is refused too (403 SSO_REQUIRED):
 * such people get their account from their first single sign-on, never a password account beside it.
 */
export async function assertSignupWithoutSso(db: Db, email: string): Promise<void> {
  if ((await ssoClaimOf(db, email))?.enforce) throw ssoRequired();
}
