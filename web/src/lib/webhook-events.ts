/**
 * The subscribable events, in the order the webhook form lists them: the contract's list, from its zod-free
 * module (importing the package index would put zod in the bundle, ADR 0006).
 */
export { WEBHOOK_EVENTS } from '@svcenv/contract/constants';
