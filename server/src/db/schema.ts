import type { ColumnType, Generated } from 'kysely';

/**
 * Row types of every table. Timestamps are ISO 8601 text in both dialects (sortable, identical on the
 * wire); booleans are 0/1 integers; JSON columns are text. Values are only ever stored sealed (lib/crypto).
 */
export interface Database {
  users: UsersTable;
  workspaces: WorkspacesTable;
  workspace_members: WorkspaceMembersTable;
  projects: ProjectsTable;
  environments: EnvironmentsTable;
  variables: VariablesTable;
  personal_overrides: PersonalOverridesTable;
  variable_history: VariableHistoryTable;
  env_revisions: EnvRevisionsTable;
  change_requests: ChangeRequestsTable;
  change_request_items: ChangeRequestItemsTable;
  project_members: ProjectMembersTable;
  env_permissions: EnvPermissionsTable;
  access_tokens: AccessTokensTable;
  workload_identities: WorkloadIdentitiesTable;
  identity_tokens: IdentityTokensTable;
  audit_logs: AuditLogsTable;
  jobs: JobsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  audit_streams: AuditStreamsTable;
  expiry_reminders: ExpiryRemindersTable;
  mfa_backup_codes: MfaBackupCodesTable;
  mfa_challenges: MfaChallengesTable;
  email_verifications: EmailVerificationsTable;
  password_resets: PasswordResetsTable;
  instance_settings: InstanceSettingsTable;
  invites: InvitesTable;
  cache_epoch: CacheEpochTable;
  unchanged_pull_audits: UnchangedPullAuditsTable;
  task_leases: TaskLeasesTable;
  workspace_sso: WorkspaceSsoTable;
  sso_domains: SsoDomainsTable;
  sso_flows: SsoFlowsTable;
  connections: ConnectionsTable;
  dynamic_secrets: DynamicSecretsTable;
  leases: LeasesTable;
  rotations: RotationsTable;
  access_requests: AccessRequestsTable;
}

/** D70: a project's managed database (migration 2026-12-03T00-managed-credentials). */
export interface ConnectionsTable {
  id: string;
  project_id: string;
  name: string;
  kind: 'postgres' | 'mysql' | 'redis';
  host: string;
  port: number;
  database: string | null;
  username: string;
  /** Sealed with the project key, bound to this row (services/credentials/sealing.ts). */
  password_sealed: string;
  /** D70 rotate-root in flight: the new password, sealed, from before the database changed until it is kept. */
  pending_password_sealed: string | null;
  tls_mode: 'disable' | 'require' | 'verify';
  tls_ca: string | null;
  /** Moves on every change; the engines' pools are keyed by (id, version). */
  version: number;
  created_by: string;
  created_at: string;
  updated_at: string;
  root_rotated_at: string | null;
}

/** D71: an environment's dynamic secret. Statements and keys are JSON. */
export interface DynamicSecretsTable {
  id: string;
  project_id: string;
  environment_id: string;
  name: string;
  connection_id: string;
  create_statements: string;
  /** null: the engine's default revoke. */
  revoke_statements: string | null;
  /** JSON: { username, password, host?, port?, database? } → variable names. */
  keys: string;
  default_ttl_seconds: number;
  max_ttl_seconds: number;
  max_leases: number;
  created_by: string;
  created_at: string;
  updated_at: string;
}

/**
 * D71 lease states: `creating` (row written, create statements running), `active`, `revoking` (due: expired,
 * revoked by hand or with its token), `revoke_failed` (its last attempt failed; retried), and the final
 * `revoked`, `expired` and `failed` (its create failed and left no user).
 */
export type LeaseState = 'creating' | 'active' | 'revoking' | 'revoke_failed' | 'revoked' | 'expired' | 'failed';

export interface LeasesTable {
  id: string;
  project_id: string;
  environment_id: string;
  dynamic_secret_id: string;
  connection_id: string;
  username: string;
  state: LeaseState;
  /** JSON: the revoke statements as they were when the lease was made. */
  revoke_statements: string;
  /** The user whose request made it (a token's creator; an identity's id for a D60 token). */
  created_by: string;
  /** Who made it, as the lease list and the audit log name them (D34 actor). */
  created_by_name: string;
  /** The access token or D60 token that made it (revoking that token revokes the lease), else null. */
  token_id: string | null;
  created_at: string;
  expires_at: string;
  /** created_at + maxTtlSeconds (and never past the expiry of the token that made it): renewals stop here. */
  max_expires_at: string;
  /** When the revocation job next looks at it: its expiry while active, the next retry while revoking. */
  next_attempt_at: string | null;
  /** A revocation in progress holds the lease until then. */
  locked_until: string | null;
  attempts: number;
  last_error: string | null;
  /** Why it is ending or ended, once a revocation is wanted: its final state. */
  end_reason: 'revoked' | 'expired' | 'failed' | null;
  ended_at: string | null;
}

/** D72: a secret variable bound to a database user. */
export interface RotationsTable {
  id: string;
  project_id: string;
  environment_id: string;
  key: string;
  connection_id: string;
  strategy: 'single' | 'alternate';
  /** JSON array: one username (`single`) or two (`alternate`). */
  usernames: string;
  /** Which of `usernames` the variable points at now. */
  active_index: number;
  /** null: rotate only when asked. */
  interval_seconds: number | null;
  next_rotation_at: string | null;
  last_rotated_at: string | null;
  last_error: string | null;
  attempts: number;
  /** The rotation in flight: the new password, sealed, and the user it is for (an index into usernames). */
  pending_password_sealed: string | null;
  pending_index: number | null;
  locked_until: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
}

/** A periodic task's lease (jobs/task-lease.ts): the instance `holder` runs `name` until `until`. */
export interface TaskLeasesTable {
  name: string;
  holder: string;
  until: string;
}

/** One row (id 1): a counter that SQLite triggers bump on every change to the tables db/epoch-cache.ts caches. */
export interface CacheEpochTable {
  id: number;
  n: number;
}

export interface InvitesTable {
  id: string;
  workspace_id: string;
  /** Lower-cased. */
  email: string;
  ws_role: 'Owner' | 'Member';
  /** SHA-256 of the invite token; the token itself is only in the emailed link. */
  token_hash: string;
  invited_by: string | null;
  expires_at: string;
  accepted_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

/** D60: a workload identity; `deleted_at` keeps a deleted one's name for the audit log. */
export interface WorkloadIdentitiesTable {
  id: string;
  workspace_id: string;
  name: string;
  issuer: string;
  audience: string;
  subject: string | null;
  /** JSON object: claim name → `*` pattern. */
  claims: string;
  scope: 'read' | 'write';
  project_id: string | null;
  /** JSON array of environment names, or ["*"]. */
  envs: string;
  ttl_seconds: number;
  /** D62: JSON array; empty: anywhere. */
  trusted_cidrs: string;
  created_by: string;
  created_at: string;
  updated_at: string;
  last_login_at: string | null;
  deleted_at: string | null;
}

/** D60: an access token issued to an identity; `token_digest` is SHA-256 of the token (hex). */
export interface IdentityTokensTable {
  id: string;
  identity_id: string;
  token_prefix: string;
  token_digest: string;
  expires_at: string;
  created_at: string;
}

export interface JobsTable {
  id: Generated<number>;
  kind: string;
  /** JSON payload sealed with a key derived from the master key (it may hold a link with a token). */
  payload_sealed: string;
  status: 'pending' | 'running' | 'done' | 'dead';
  attempts: Generated<number>;
  max_attempts: number;
  run_at: string;
  /** While running: the lease; a job whose lease ran out (its instance died) is claimed again. */
  locked_until: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  /** Jobs of one lane (one webhook) run at most `laneLimit` at a time per instance (jobs/queue.ts); null: none. */
  lane: Generated<string | null>;
}

export interface UsersTable {
  id: string;
  name: string;
  /** Lower-cased (D7: emails compare case-insensitively). */
  email: string;
  password_hash: string;
  /** D9: bumped on password change and two-factor changes; JWTs carry it. */
  session_version: Generated<number>;
  email_verified_at: string | null;
  mfa_secret_sealed: string | null;
  mfa_enabled: Generated<number>;
  /** D13: last accepted TOTP time step (unix time / 30 s); codes of this step or earlier are refused. */
  mfa_last_step: number | null;
  /** D68: the workspace the user last switched to or joined; a login lands there while they are a member. */
  last_workspace_id: string | null;
  /** D69: 1 for the instance's administrators (the first account, and whoever grant-admin names). */
  instance_admin: Generated<number>;
  created_at: string;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  slug: string;
  plan: string;
  operator_last_sync: string | null;
  created_at: string;
}

export interface WorkspaceMembersTable {
  workspace_id: string;
  user_id: string;
  ws_role: 'Owner' | 'Member';
  joined_at: string;
  /** D73: when a temporary role ends (an Owner is a Member again; a Member's membership ends); null: never. */
  expires_at: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ProjectsTable {
  id: string;
  workspace_id: string;
  name: string;
  /** D48: unique within the workspace; the paths accept it in place of the id (D58). */
  slug: string;
  description: string | null;
  color: string;
  /** The project's data key, sealed by the master key. */
  wrapped_key: string;
  created_at: string;
  updated_at: string;
}

export interface EnvironmentsTable {
  id: string;
  project_id: string;
  name: string;
  protected: number;
  color: string;
  position: number;
  /** Bumped in the same transaction as every change to the environment's variables (pull cache key). */
  revision: Generated<number>;
  /** D47: 1 when direct writes by others than Owners and project Admins need a change request. */
  require_approval: Generated<number>;
  /** D75: override writes in this environment (0: none ever), migration 2026-12-03T11-personal-overrides. */
  override_rev: Generated<number>;
  created_at: string;
}

export interface VariablesTable {
  environment_id: string;
  key: string;
  type: 'secret' | 'plain';
  value_sealed: string;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** D75: a person's own value of a key (migration 2026-12-03T11-personal-overrides), sealed as a current value. */
export interface PersonalOverridesTable {
  environment_id: string;
  user_id: string;
  key: string;
  value_sealed: string;
  created_at: string;
  updated_at: string;
}

export interface VariableHistoryTable {
  id: Generated<number>;
  environment_id: string;
  key: string;
  type: 'secret' | 'plain';
  value_sealed: string;
  expires_at: string | null;
  action: 'created' | 'updated' | 'deleted' | 'restored';
  changed_by: string | null;
  changed_at: string;
  /** D44: the environment revision this entry belongs to (0: written before revisions were recorded). */
  revision: Generated<number>;
}

/** D44: one row per revision of an environment; `created`, `updated`, `deleted` are JSON arrays of keys. */
export interface EnvRevisionsTable {
  environment_id: string;
  revision: number;
  action: string;
  actor_id: string;
  actor_type: 'user' | 'token';
  actor_name: string;
  created: string;
  updated: string;
  deleted: string;
  created_at: string;
}

/** D47: a proposed change to one environment. */
export interface ChangeRequestsTable {
  id: string;
  environment_id: string;
  status: 'open' | 'applied' | 'rejected' | 'withdrawn';
  base_revision: number;
  /** The user who opened it (a token's creator). */
  author_id: string;
  /** D34 actor name of the credential that opened it. */
  author_name: string;
  message: string;
  created_at: string;
  /** Actor name of whoever closed it. */
  closed_by: string | null;
  closed_at: string | null;
  applied_revision: number | null;
  reason: string | null;
}

/** D47: one change of a request; `value_sealed` (a `set` only) is sealed in the `change-request` role. */
export interface ChangeRequestItemsTable {
  change_request_id: string;
  position: number;
  key: string;
  op: 'set' | 'delete';
  type: 'secret' | 'plain';
  value_sealed: string | null;
  expires_at: string | null;
}

export interface ProjectMembersTable {
  project_id: string;
  user_id: string;
  role: 'Admin' | 'Developer' | 'Read-only';
  /** D73: when a temporary project role ends; null: never. */
  expires_at: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface EnvPermissionsTable {
  project_id: string;
  user_id: string;
  environment_id: string;
  permission: 'none' | 'read' | 'write';
  /** D73: when a temporary per-environment permission ends; null: never. */
  expires_at: ColumnType<string | null, string | null | undefined, string | null>;
  /** D74: the access request that granted it (D76 source `request`). */
  request_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** D74: access requests (migration 2026-12-03T10-temporary-access). */
export interface AccessRequestsTable {
  id: string;
  workspace_id: string;
  project_id: string;
  environment_id: string;
  requester_id: string;
  permission: 'read' | 'write';
  duration_seconds: number;
  reason: string;
  status: 'pending' | 'approved' | 'denied' | 'withdrawn' | 'expired';
  decided_by: string | null;
  decision_reason: string | null;
  granted_seconds: number | null;
  created_at: string;
  decided_at: string | null;
}

export interface AccessTokensTable {
  id: string;
  workspace_id: string;
  created_by: string;
  name: string;
  token_prefix: string;
  /** bcrypt(SHA-256(token)); the plaintext is never stored. */
  token_hash: string;
  scope: 'read' | 'write' | 'deploy';
  /** JSON array of environment names, or ["*"]. */
  envs: string;
  project_id: string | null;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
  /** D62: JSON array of addresses and CIDR ranges; null (or empty): anywhere. */
  trusted_cidrs: string | null;
}

export interface AuditLogsTable {
  id: Generated<number>;
  workspace_id: string;
  project_id: string | null;
  action: string;
  target_key: string | null;
  target_env: string | null;
  actor_id: string | null;
  actor_type: 'user' | 'token';
  /** JSON; never holds a variable value (D36). */
  detail: string | null;
  created_at: string;
}

export interface WebhooksTable {
  id: string;
  workspace_id: string;
  name: string;
  /** Shown to Owners only; never logged or audited (it may carry a credential in its path or query). */
  url: string;
  /** JSON array of event kinds. */
  events: string;
  active: number;
  /** The one project whose events it hears; null: every project of the workspace. */
  project_id: string | null;
  /** The `whsec_` signing secret, sealed with a key derived from the master key. */
  secret_sealed: string;
  /** HTTP status of the last attempt, 0 when no response came (D35); null before the first. */
  last_status: number | null;
  last_fired_at: string | null;
  created_at: string;
  updated_at: string;
}

/** D65: one audit stream (jobs/audit-streams.ts, ADR 0024). */
export interface AuditStreamsTable {
  id: string;
  workspace_id: string;
  /** Shown to Owners only; never logged or audited (it may carry a credential in its path or query). */
  url: string;
  /** The `whsec_` signing secret, sealed like a webhook's. */
  secret_sealed: string;
  /** The last audit id delivered (acknowledged by a 2xx), or the id the stream starts after. */
  cursor: number;
  /** HTTP status of the last attempt, 0 when no response came; null before the first. */
  last_status: number | null;
  last_attempt_at: string | null;
  /** Time of the last 2xx; null: nothing delivered yet. */
  last_delivered_at: string | null;
  /** Failed attempts since the last 2xx (the backoff's exponent). */
  failures: Generated<number>;
  next_attempt_at: string;
  /** The instance sending the stream's current batch, until `lease_until`. */
  lease_owner: string | null;
  lease_until: string | null;
  created_at: string;
}

/** One row per delivery attempt (D35: status, duration, time, attempt number, event). */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: string;
  /** X-Svcenv-Delivery: the same on every attempt of one delivery. */
  delivery_id: string;
  event: string;
  attempt: number;
  status: number;
  duration_ms: number;
  /** Our own short reason (`timeout`, `network error ECONNREFUSED`, ...), never a URL or a body. */
  error: string | null;
  created_at: string;
}

/** D37: when the last expiry reminder of a workspace was sent; claimed with one conditional upsert. */
export interface ExpiryRemindersTable {
  workspace_id: string;
  sent_at: string;
}

export interface MfaBackupCodesTable {
  user_id: string;
  /** HMAC-SHA256 of the normalised code under a key derived from the master key; never the code. */
  code_hash: string;
  created_at: string;
}

/** A login waiting for its second factor (the MFA-pending state); `token_hash` is SHA-256 of the mfaToken. */
export interface MfaChallengesTable {
  id: string;
  token_hash: string;
  user_id: string;
  /** Codes tried with this mfaToken; at 5 it is void (D13). */
  attempts: Generated<number>;
  expires_at: string;
  created_at: string;
}

export interface EmailVerificationsTable {
  /** SHA-256 of the link's token; the token itself is only in the email. */
  token_hash: string;
  user_id: string;
  /** The address the link was sent to; verifying marks the account only while its email is still this. */
  email: string;
  expires_at: string;
  created_at: string;
}

/** D54: the one live password reset link of a user (a newer link replaces the row). */
export interface PasswordResetsTable {
  user_id: string;
  /** SHA-256 of the link's token; the token itself is only in the email (or the admin's terminal). */
  token_hash: string;
  /** The address the link was issued for; it resets nothing once the account's email is another. */
  email: string;
  /** Wrong second-factor codes tried with this link; at 5 it is void (D13). */
  attempts: Generated<number>;
  expires_at: string;
  created_at: string;
}

/** D66: when an unchanged pull (304) of a credential, environment and revision was last audited. */
export interface UnchangedPullAuditsTable {
  /** The access token's id (pull takes access tokens only). */
  credential_id: string;
  environment_id: string;
  revision: number;
  audited_at: string;
}

/** D69: one row (id 1) of instance-wide settings. */
export interface InstanceSettingsTable {
  id: number;
  signup: 'open' | 'invite' | 'closed';
}

/** D63: a workspace's single sign-on (services/identity/sso.ts, ADR 0025). */
export interface WorkspaceSsoTable {
  workspace_id: string;
  /** As written: the ID token's `iss` and the discovery document's `issuer` must equal it to the character. */
  issuer: string;
  client_id: string;
  /** Sealed with a master-key-derived key, bound to the workspace; never answered, logged or audited. */
  client_secret_sealed: string;
  /** 1: password login refused (SSO_REQUIRED) in the claimed domains, except for the workspace's Owners. */
  enforce: Generated<number>;
  created_at: string;
  updated_at: string;
}

/** D63: an email domain (lower-cased) and the one workspace that claims it. */
export interface SsoDomainsTable {
  domain: string;
  workspace_id: string;
}

/** D63: a sign-in between its start and its callback, for any instance to finish (single use, 10 minutes). */
export interface SsoFlowsTable {
  /** SHA-256 of the `state` sent to the identity provider. */
  state_hash: string;
  workspace_id: string;
  nonce: string;
  /** The PKCE code verifier, sealed and bound to the state's hash. */
  code_verifier_sealed: string;
  /** SHA-256 of the browser-binding cookie set at the start (no login CSRF: ADR 0025). */
  browser_hash: string;
  expires_at: string;
  created_at: string;
}
