/**
 * The operations whose JSON answers the CLI checks (each against its schema). Loaded with a dynamic import
 * by the commands that need them, so that `version`, `pull` and `run` start without building every zod
 * schema (ADR 0001-cli); those reach the server through the zod-free endpoint table.
 */
export { MAX_BULK_ITEMS } from '@svcenv/contract';
export { operations } from '@svcenv/contract/operations';
