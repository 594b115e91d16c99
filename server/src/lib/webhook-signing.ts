import { createHmac } from 'node:crypto';
import { open, seal } from './crypto.js';
import { randomBase62 } from './ids.js';

/** Spec "Webhook": the signing secret is `whsec_` followed by characters (here 40 base62, ~238 bits). */
export const newWebhookSecret = (): string => `whsec_${randomBase62(40)}`;

/** The secret is stored sealed, bound to its webhook, with a key derived from the master key. */
const aad = (webhookId: string) => `svcenv/webhook-secret/${webhookId}`;
export const sealWebhookSecret = (key: Buffer, webhookId: string, secret: string): string =>
  seal(key, Buffer.from(secret, 'utf8'), aad(webhookId));
export const openWebhookSecret = (key: Buffer, webhookId: string, sealed: string): string =>
  open(key, sealed, aad(webhookId)).toString('utf8');

/** D65: an audit stream's secret, sealed the same way, bound to its stream. */
const streamAad = (streamId: string) => `svcenv/audit-stream-secret/${streamId}`;
export const sealStreamSecret = (key: Buffer, streamId: string, secret: string): string =>
  seal(key, Buffer.from(secret, 'utf8'), streamAad(streamId));
export const openStreamSecret = (key: Buffer, streamId: string, sealed: string): string =>
  open(key, sealed, streamAad(streamId)).toString('utf8');

/** Spec delivery rules 1-2: `sha256=` + hex HMAC-SHA256 of the exact raw body, keyed with the secret. */
export const signWebhookBody = (secret: string, body: string | Buffer): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
