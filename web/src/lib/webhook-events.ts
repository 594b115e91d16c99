/**
 * The subscribable events, in the order the webhook form lists them, and the ones a new webhook starts with
 * (every change, ADR 0004): the contract's lists, from its zod-free module (importing the package index would
 * put zod in the bundle, ADR 0006).
 */
export { DEFAULT_WEBHOOK_EVENTS, WEBHOOK_EVENTS } from '@svcenv/contract/constants';
