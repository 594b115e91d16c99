/** The wire contract shared by the server, the CLI and the dashboard. */
export * from './account.js';
export * from './auth.js';
export * from './change-requests.js';
export * from './cli-releases.js';
export * from './common.js';
export * from './constants.js';
export * from './dotenv.js';
export * from './dotenv-parse.js';
export * from './endpoints.js';
export * from './errors.js';
export * from './health.js';
export * from './projects.js';
export * from './spelling.js';
export * from './tokens.js';
export * from './variables.js';
export * from './webhooks.js';
export * from './workspace.js';
