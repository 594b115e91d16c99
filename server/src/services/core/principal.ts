/** Who is making a request, as established by authentication (services/identity/authn.ts). */
export type WsRole = 'Owner' | 'Member';
export type ProjectRole = 'Admin' | 'Developer' | 'Read-only';
export type Permission = 'none' | 'read' | 'write';

export interface TokenGrant {
  id: string;
  name: string;
  scope: 'read' | 'write' | 'deploy';
  /** Environment names, or ['*'] for every environment. */
  envs: string[];
  /** null: workspace-wide. */
  projectId: string | null;
  /** D62: the addresses and ranges it may be used from; empty: anywhere. */
  trustedCidrs: readonly string[];
  /** D60: the workload identity it was issued to (its access is the identity's alone), else null. */
  identity: { id: string; name: string } | null;
}

export interface Principal {
  kind: 'user' | 'token';
  /**
   * The user, or for a token the user who created it (whose permissions bound the token, D32). For a token
   * issued to a workload identity (D60), the identity's id: it acts as an Owner bounded by the grant alone.
   */
  userId: string;
  userName: string;
  workspaceId: string;
  /** Read from the database on every request, never from the credential (D9). */
  wsRole: WsRole;
  /** Audit actor: the user id, or the token id. */
  actorId: string;
  /** Webhook `actor` (D34): the user's name, or `token:<token name>`. */
  actorName: string;
  token: TokenGrant | null;
  /**
   * Work svcenv does by itself (a lease expiring, a scheduled rotation, D71/D72): audited without an actor
   * (as audit.prune is), named `actorName` in revisions and webhook payloads. Never authorized: such work
   * reaches its rows directly, not through services/core/authz.ts.
   */
  system?: true;
}

/** The actor of account events recorded outside an authenticated request (login, verify-mfa). */
export function userActor(userId: string, workspaceId: string): Principal {
  return {
    kind: 'user',
    userId,
    userName: '',
    workspaceId,
    wsRole: 'Member',
    actorId: userId,
    actorName: '',
    token: null,
  };
}

/** svcenv itself acting in a workspace (Principal.system): the revocation and rotation jobs (D71, D72). */
export function systemActor(workspaceId: string, name = 'svcenv'): Principal {
  return {
    kind: 'user',
    userId: 'svcenv',
    userName: name,
    workspaceId,
    wsRole: 'Member',
    actorId: 'svcenv',
    actorName: name,
    token: null,
    system: true,
  };
}

/**
 * D73: whether a grant with this `expires_at` (ISO 8601, or null for a permanent one) still holds at `now`.
 * Every authorization decision asks this of the row it already read, so an expired grant is refused at
 * once, on every instance, before the access-expiry job removes it, and without any further query.
 */
export function grantLive(expiresAt: string | null | undefined, now: Date): boolean {
  return expiresAt == null || Date.parse(expiresAt) > now.getTime();
}

/**
 * D73: the workspace role a membership row stands for at `now`: an expired temporary Owner is a Member
 * again, an expired temporary membership is none (null).
 */
export function liveWsRole(role: WsRole, expiresAt: string | null | undefined, now: Date): WsRole | null {
  if (grantLive(expiresAt, now)) return role;
  return role === 'Owner' ? 'Member' : null;
}
