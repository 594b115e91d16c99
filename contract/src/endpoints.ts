/**
 * Every HTTP operation's method, path and credential, once, without zod: the dashboard's bundle and the CLI's
 * cold path (ADR 0001-cli) import this module at run time. The operations (src/operations/) add the zod
 * schemas to these entries, and the server registers its routes from them.
 *
 * A path is the URL as a client sends it: `/:name` is a path parameter (always a whole segment); a colon
 * anywhere else is literal (`vars:bulkDelete`).
 */

/** The credential an operation accepts (the route's `config.auth`); `none` is public. */
export type AuthMode = 'none' | 'jwt' | 'token' | 'any';
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Endpoint {
  readonly name: string;
  readonly method: Method;
  readonly path: string;
  readonly auth: AuthMode;
}

/** Where the API lives; the dashboard is served from every other path. */
export const API_PREFIX = '/v1';

const table = {
  // health (D6, D52): outside /v1
  healthz: { method: 'GET', path: '/healthz', auth: 'none' },
  readyz: { method: 'GET', path: '/readyz', auth: 'none' },

  // auth
  signup: { method: 'POST', path: '/v1/auth/signup', auth: 'none' },
  login: { method: 'POST', path: '/v1/auth/login', auth: 'none' },
  verifyMfa: { method: 'POST', path: '/v1/auth/verify-mfa', auth: 'none' },
  verifyEmail: { method: 'POST', path: '/v1/auth/verify-email', auth: 'none' },
  resendVerification: { method: 'POST', path: '/v1/auth/resend-verification', auth: 'jwt' },
  logout: { method: 'POST', path: '/v1/auth/logout', auth: 'none' },
  forgotPassword: { method: 'POST', path: '/v1/auth/forgot-password', auth: 'none' },
  resetPassword: { method: 'POST', path: '/v1/auth/reset-password', auth: 'none' },
  inviteInfo: { method: 'GET', path: '/v1/auth/invite', auth: 'none' },
  authOptions: { method: 'GET', path: '/v1/auth/options', auth: 'none' },
  getSession: { method: 'GET', path: '/v1/auth/session', auth: 'jwt' },
  switchWorkspace: { method: 'POST', path: '/v1/auth/switch-workspace', auth: 'jwt' },
  // D60: a platform's identity token exchanged for a short-lived access token
  oidcLogin: { method: 'POST', path: '/v1/auth/oidc', auth: 'none' },
  // D63: single sign-on for people, browser navigations answered with redirects
  ssoStart: { method: 'GET', path: '/v1/auth/sso/start', auth: 'none' },
  ssoCallback: { method: 'GET', path: '/v1/auth/sso/callback', auth: 'none' },
  /** D69: the instance's signup mode, for the login and signup pages. */

  // me (D12)
  getMe: { method: 'GET', path: '/v1/me', auth: 'jwt' },
  updateMe: { method: 'PATCH', path: '/v1/me', auth: 'jwt' },
  changePassword: { method: 'POST', path: '/v1/me/password', auth: 'jwt' },
  listMyWorkspaces: { method: 'GET', path: '/v1/me/workspaces', auth: 'jwt' },
  findProjectWorkspace: { method: 'GET', path: '/v1/me/project-workspace', auth: 'jwt' },
  setupMfa: { method: 'POST', path: '/v1/me/mfa/setup', auth: 'jwt' },
  enableMfa: { method: 'POST', path: '/v1/me/mfa/enable', auth: 'jwt' },
  disableMfa: { method: 'POST', path: '/v1/me/mfa/disable', auth: 'jwt' },
  regenerateBackupCodes: { method: 'POST', path: '/v1/me/mfa/backup-codes', auth: 'jwt' },

  // projects and environments
  listProjects: { method: 'GET', path: '/v1/projects', auth: 'any' },
  createProject: { method: 'POST', path: '/v1/projects', auth: 'any' },
  getProject: { method: 'GET', path: '/v1/projects/:id', auth: 'any' },
  updateProject: { method: 'PATCH', path: '/v1/projects/:id', auth: 'any' },
  deleteProject: { method: 'DELETE', path: '/v1/projects/:id', auth: 'any' },
  listEnvs: { method: 'GET', path: '/v1/projects/:id/envs', auth: 'any' },
  createEnv: { method: 'POST', path: '/v1/projects/:id/envs', auth: 'any' },
  updateEnv: { method: 'PATCH', path: '/v1/projects/:id/envs/:env', auth: 'any' },
  deleteEnv: { method: 'DELETE', path: '/v1/projects/:id/envs/:env', auth: 'any' },
  diffEnvs: { method: 'GET', path: '/v1/projects/:id/diff', auth: 'any' },
  projectAudit: { method: 'GET', path: '/v1/projects/:id/audit', auth: 'any' },

  // variables, revisions (D44-D46)
  listVars: { method: 'GET', path: '/v1/projects/:id/envs/:env/vars', auth: 'any' },
  bulkUpsert: { method: 'POST', path: '/v1/projects/:id/vars', auth: 'any' },
  updateVar: { method: 'PUT', path: '/v1/projects/:id/envs/:env/vars/:key', auth: 'any' },
  deleteVar: { method: 'DELETE', path: '/v1/projects/:id/envs/:env/vars/:key', auth: 'any' },
  bulkDelete: { method: 'POST', path: '/v1/projects/:id/envs/:env/vars:bulkDelete', auth: 'any' },
  varHistory: { method: 'GET', path: '/v1/projects/:id/envs/:env/vars/:key/history', auth: 'any' },
  restoreVar: { method: 'POST', path: '/v1/projects/:id/envs/:env/vars/:key/restore', auth: 'any' },
  listRevisions: { method: 'GET', path: '/v1/projects/:id/envs/:env/revisions', auth: 'any' },
  rollback: { method: 'POST', path: '/v1/projects/:id/envs/:env/rollback', auth: 'any' },

  // access requests (D74) and who has access (D76)
  createAccessRequest: { method: 'POST', path: '/v1/projects/:id/access-requests', auth: 'any' },
  listAccessRequests: { method: 'GET', path: '/v1/projects/:id/access-requests', auth: 'any' },
  approveAccessRequest: { method: 'POST', path: '/v1/projects/:id/access-requests/:requestId/approve', auth: 'jwt' },
  denyAccessRequest: { method: 'POST', path: '/v1/projects/:id/access-requests/:requestId/deny', auth: 'jwt' },
  withdrawAccessRequest: {
    method: 'POST',
    path: '/v1/projects/:id/access-requests/:requestId/withdraw',
    auth: 'any',
  },
  getEnvAccess: { method: 'GET', path: '/v1/projects/:id/envs/:env/access', auth: 'any' },
  // personal overrides (D75)
  listOverrides: { method: 'GET', path: '/v1/projects/:id/envs/:env/overrides', auth: 'any' },
  putOverride: { method: 'PUT', path: '/v1/projects/:id/envs/:env/overrides/:key', auth: 'any' },
  deleteOverride: { method: 'DELETE', path: '/v1/projects/:id/envs/:env/overrides/:key', auth: 'any' },

  // change requests (D47)
  openChangeRequest: { method: 'POST', path: '/v1/projects/:id/envs/:env/change-requests', auth: 'any' },
  listChangeRequests: { method: 'GET', path: '/v1/projects/:id/envs/:env/change-requests', auth: 'any' },
  getChangeRequest: { method: 'GET', path: '/v1/projects/:id/envs/:env/change-requests/:requestId', auth: 'any' },
  approveChangeRequest: {
    method: 'POST',
    path: '/v1/projects/:id/envs/:env/change-requests/:requestId/approve',
    auth: 'any',
  },
  rejectChangeRequest: {
    method: 'POST',
    path: '/v1/projects/:id/envs/:env/change-requests/:requestId/reject',
    auth: 'any',
  },
  withdrawChangeRequest: {
    method: 'DELETE',
    path: '/v1/projects/:id/envs/:env/change-requests/:requestId',
    auth: 'any',
  },

  // connections to managed databases (D70): Owners and project Admins
  listConnections: { method: 'GET', path: '/v1/projects/:id/connections', auth: 'any' },
  createConnection: { method: 'POST', path: '/v1/projects/:id/connections', auth: 'any' },
  getConnection: { method: 'GET', path: '/v1/projects/:id/connections/:name', auth: 'any' },
  updateConnection: { method: 'PATCH', path: '/v1/projects/:id/connections/:name', auth: 'any' },
  deleteConnection: { method: 'DELETE', path: '/v1/projects/:id/connections/:name', auth: 'any' },
  testConnection: { method: 'POST', path: '/v1/projects/:id/connections/:name/test', auth: 'any' },
  rotateConnectionRoot: { method: 'POST', path: '/v1/projects/:id/connections/:name/rotate-root', auth: 'any' },
  // dynamic secrets and their leases (D71)
  listDynamicSecrets: { method: 'GET', path: '/v1/projects/:id/envs/:env/dynamic', auth: 'any' },
  getDynamicSecret: { method: 'GET', path: '/v1/projects/:id/envs/:env/dynamic/:name', auth: 'any' },
  putDynamicSecret: { method: 'PUT', path: '/v1/projects/:id/envs/:env/dynamic/:name', auth: 'any' },
  deleteDynamicSecret: { method: 'DELETE', path: '/v1/projects/:id/envs/:env/dynamic/:name', auth: 'any' },
  listLeases: { method: 'GET', path: '/v1/projects/:id/envs/:env/dynamic/:name/leases', auth: 'any' },
  createLease: { method: 'POST', path: '/v1/projects/:id/envs/:env/dynamic/:name/leases', auth: 'any' },
  renewLease: {
    method: 'POST',
    path: '/v1/projects/:id/envs/:env/dynamic/:name/leases/:leaseId/renew',
    auth: 'any',
  },
  revokeLease: { method: 'DELETE', path: '/v1/projects/:id/envs/:env/dynamic/:name/leases/:leaseId', auth: 'any' },
  // rotation of a stored credential (D72)
  listRotations: { method: 'GET', path: '/v1/projects/:id/envs/:env/rotations', auth: 'any' },
  putRotation: { method: 'PUT', path: '/v1/projects/:id/envs/:env/rotations/:key', auth: 'any' },
  deleteRotation: { method: 'DELETE', path: '/v1/projects/:id/envs/:env/rotations/:key', auth: 'any' },
  rotateNow: { method: 'POST', path: '/v1/projects/:id/envs/:env/rotations/:key/rotate', auth: 'any' },

  // pull (access tokens only, spec variables rule 8) and export (D28, D55)
  pull: { method: 'GET', path: '/v1/projects/:id/envs/:env/pull', auth: 'token' },
  exportVars: { method: 'GET', path: '/v1/projects/:id/envs/:env/export', auth: 'any' },

  // tokens (D31); an access token's own description (D58)
  describeOwnToken: { method: 'GET', path: '/v1/auth/token', auth: 'token' },
  listTokens: { method: 'GET', path: '/v1/tokens', auth: 'jwt' },
  createToken: { method: 'POST', path: '/v1/tokens', auth: 'jwt' },
  rotateToken: { method: 'POST', path: '/v1/tokens/:id/rotate', auth: 'jwt' },
  revokeToken: { method: 'DELETE', path: '/v1/tokens/:id', auth: 'jwt' },

  // webhooks (D34, D35)
  listWebhooks: { method: 'GET', path: '/v1/workspace/webhooks', auth: 'jwt' },
  createWebhook: { method: 'POST', path: '/v1/workspace/webhooks', auth: 'jwt' },
  updateWebhook: { method: 'PATCH', path: '/v1/workspace/webhooks/:id', auth: 'jwt' },
  deleteWebhook: { method: 'DELETE', path: '/v1/workspace/webhooks/:id', auth: 'jwt' },
  listDeliveries: { method: 'GET', path: '/v1/workspace/webhooks/:id/deliveries', auth: 'jwt' },
  testWebhook: { method: 'POST', path: '/v1/workspace/webhooks/:id/test', auth: 'jwt' },

  // workload identities (D60): Owner only, dashboard session only (D10)
  listIdentities: { method: 'GET', path: '/v1/workspace/identities', auth: 'jwt' },
  createIdentity: { method: 'POST', path: '/v1/workspace/identities', auth: 'jwt' },
  getIdentity: { method: 'GET', path: '/v1/workspace/identities/:id', auth: 'jwt' },
  updateIdentity: { method: 'PATCH', path: '/v1/workspace/identities/:id', auth: 'jwt' },
  deleteIdentity: { method: 'DELETE', path: '/v1/workspace/identities/:id', auth: 'jwt' },
  // single sign-on (D63): Owner only, dashboard session only (D10)
  getSso: { method: 'GET', path: '/v1/workspace/sso', auth: 'jwt' },
  putSso: { method: 'PUT', path: '/v1/workspace/sso', auth: 'jwt' },
  deleteSso: { method: 'DELETE', path: '/v1/workspace/sso', auth: 'jwt' },
  testSso: { method: 'POST', path: '/v1/workspace/sso/test', auth: 'jwt' },
  // audit streams (D65)
  listAuditStreams: { method: 'GET', path: '/v1/workspace/audit-streams', auth: 'jwt' },
  createAuditStream: { method: 'POST', path: '/v1/workspace/audit-streams', auth: 'jwt' },
  deleteAuditStream: { method: 'DELETE', path: '/v1/workspace/audit-streams/:id', auth: 'jwt' },

  // workspace, team, invites
  getWorkspace: { method: 'GET', path: '/v1/workspace', auth: 'jwt' },
  renameWorkspace: { method: 'PATCH', path: '/v1/workspace', auth: 'jwt' },
  getBilling: { method: 'GET', path: '/v1/workspace/billing', auth: 'jwt' },
  getConnections: { method: 'GET', path: '/v1/workspace/connections', auth: 'jwt' },
  getStats: { method: 'GET', path: '/v1/workspace/stats', auth: 'jwt' },
  workspaceAudit: { method: 'GET', path: '/v1/workspace/audit', auth: 'jwt' },
  listMembers: { method: 'GET', path: '/v1/workspace/members', auth: 'jwt' },
  updateMember: { method: 'PATCH', path: '/v1/workspace/members/:userId', auth: 'jwt' },
  removeMember: { method: 'DELETE', path: '/v1/workspace/members/:userId', auth: 'jwt' },
  invite: { method: 'POST', path: '/v1/workspace/invites', auth: 'jwt' },
  listInvites: { method: 'GET', path: '/v1/workspace/invites', auth: 'jwt' },
  revokeInvite: { method: 'DELETE', path: '/v1/workspace/invites/:id', auth: 'jwt' },
  acceptInvite: { method: 'POST', path: '/v1/auth/accept-invite', auth: 'jwt' },

  // project members (D22)
  listProjectMembers: { method: 'GET', path: '/v1/projects/:id/members', auth: 'any' },
  setProjectRole: { method: 'PUT', path: '/v1/projects/:id/members/:userId', auth: 'any' },
  removeProjectMember: { method: 'DELETE', path: '/v1/projects/:id/members/:userId', auth: 'any' },
  setEnvPermission: { method: 'PUT', path: '/v1/projects/:id/members/:userId/envs/:env', auth: 'any' },
  clearEnvPermission: { method: 'DELETE', path: '/v1/projects/:id/members/:userId/envs/:env', auth: 'any' },

  // instance administration (D69): administrators only, through a session
  adminListWorkspaces: { method: 'GET', path: '/v1/admin/workspaces', auth: 'jwt' },
  adminSetPlan: { method: 'PUT', path: '/v1/admin/workspaces/:id/plan', auth: 'jwt' },
  adminListUsers: { method: 'GET', path: '/v1/admin/users', auth: 'jwt' },
  adminResetLink: { method: 'POST', path: '/v1/admin/users/:id/reset-link', auth: 'jwt' },
  adminGetSettings: { method: 'GET', path: '/v1/admin/settings', auth: 'jwt' },
  adminUpdateSettings: { method: 'PUT', path: '/v1/admin/settings', auth: 'jwt' },

  // CLI releases (D39, D41): no credential, `upgrade` works before `login`
  cliLatest: { method: 'GET', path: '/v1/cli/latest', auth: 'none' },
  cliDownload: { method: 'GET', path: '/v1/cli/download/:os/:arch', auth: 'none' },

  // the OpenAPI document itself (not listed in it)
  openapi: { method: 'GET', path: '/v1/openapi.json', auth: 'none' },
} as const satisfies Record<string, Omit<Endpoint, 'name'>>;

export type EndpointName = keyof typeof table;
/** Each entry carries its own name, so that a client can find the operation's types from the entry alone. */
export type Endpoints = { readonly [N in EndpointName]: (typeof table)[N] & { readonly name: N } };

export const endpoints = Object.fromEntries(
  Object.entries(table).map(([name, entry]) => [name, { name, ...entry }]),
) as unknown as Endpoints;

/** `{id: string, env: string}` for `/v1/projects/:id/envs/:env`: the parameters a path template names. */
export type PathParams<P extends string> = P extends `${string}/:${infer Rest}`
  ? Rest extends `${infer Name}/${infer Tail}`
    ? { [K in Name]: string } & PathParams<`/${Tail}`>
    : { [K in Rest]: string }
  : unknown;

const PARAM = /\/:([A-Za-z]+)/g;

/** No argument for a path without parameters, else the object of its parameters. */
export type PathArgs<P extends string> = keyof PathParams<P> extends never ? [] : [params: PathParams<P>];

/**
 * The URL path of an endpoint with its parameters filled in, each an encoded path segment, so that a name or
 * key never reaches into the URL's structure.
 */
export function pathOf<E extends Endpoint>(endpoint: E, ...[params]: PathArgs<E['path']>): string {
  return expandPath(endpoint, params as object | undefined);
}

/** `pathOf` for a generic client, whose own signature typed the parameters; a missing one throws. */
export function expandPath(endpoint: Endpoint, params: object = {}): string {
  const values = params as Record<string, string | undefined>;
  return endpoint.path.replace(PARAM, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`${endpoint.name}: no value for :${name}`);
    return `/${encodeURIComponent(value)}`;
  });
}
