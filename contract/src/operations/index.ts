/**
 * Every HTTP operation of the API, once: its endpoint (src/endpoints.ts, zod-free) with its schemas. The
 * server registers its routes from these (server/src/http/operation.ts); the CLI and the dashboard call by
 * them; the tests too.
 */
import type { Endpoint, EndpointName } from '../endpoints.js';
import * as access from './access.js';
import * as admin from './admin.js';
import * as auditStreams from './audit-streams.js';
import * as auth from './auth.js';
import * as changeRequests from './change-requests.js';
import * as cliReleases from './cli-releases.js';
import * as credentials from './credentials.js';
import * as health from './health.js';
import * as identities from './identities.js';
import * as me from './me.js';
import * as meta from './meta.js';
import * as projectMembers from './project-members.js';
import * as projects from './projects.js';
import * as pull from './pull.js';
import * as sso from './sso.js';
import * as tokens from './tokens.js';
import * as variables from './variables.js';
import * as webhooks from './webhooks.js';
import * as workspace from './workspace.js';

export * from './define.js';

/** Every operation by name; each endpoint has exactly one (the type check fails on a missing one). */
export const operations = {
  ...health,
  ...auth,
  ...me,
  ...projects,
  ...variables,
  ...changeRequests,
  ...access,
  ...credentials,
  ...pull,
  ...tokens,
  ...webhooks,
  ...identities,
  ...sso,
  ...auditStreams,
  ...workspace,
  ...projectMembers,
  ...admin,
  ...cliReleases,
  ...meta,
} satisfies { readonly [N in EndpointName]: { readonly name: N } };

export type Operations = typeof operations;

/** The operation an endpoint entry belongs to (a zod-free client holds the entry, and types by this). */
export type OperationOf<E extends Endpoint> = E['name'] extends EndpointName ? Operations[E['name']] : never;
