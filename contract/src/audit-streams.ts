import { z } from 'zod';
import { timestamp, uuid } from './common.js';
import { auditEntry } from './projects.js';

/**
 * D65: audit streams, the workspace's audit log POSTed to the company's log system. Owner only, dashboard
 * session only (like webhooks, D10).
 */

/** Shape only; the scheme and the target address are checked by the server (D5, as webhook URLs). */
export const createAuditStreamBody = z.strictObject({ url: z.string().trim().min(1).max(2048) });
export const auditStreamParams = z.strictObject({ id: uuid });

/** 201: `secret` (`whsec_...`) signs every batch and is returned only here. */
export const createAuditStreamResponse = z.object({
  id: uuid,
  url: z.string(),
  secret: z.string(),
  createdAt: timestamp,
});

export const auditStream = z.object({
  id: uuid,
  url: z.string(),
  createdAt: timestamp,
  /** The id of the last entry the receiver acknowledged (a 2xx); null before the first. */
  lastDeliveredId: z.number().int().nullable(),
  /** HTTP status of the last attempt; 0 when no response came; null before the first attempt. */
  lastStatus: z.number().int().nullable(),
  lastDeliveredAt: timestamp.nullable(),
  /** Entries of the workspace written since the stream was created and not delivered yet. */
  pending: z.number().int(),
});
export const listAuditStreamsResponse = z.object({ streams: z.array(auditStream) });

/** The signed JSON body of every batch: up to 500 entries, in id order, each as the audit endpoints show it. */
export const auditStreamPayload = z.object({ entries: z.array(auditEntry).min(1).max(500) });
/** The most entries one batch carries (D65). */
export const AUDIT_STREAM_BATCH = 500;
/** X-Svcenv-Event of every batch (the webhook headers, D35). */
export const AUDIT_STREAM_EVENT = 'audit.entries';

export type AuditStream = z.infer<typeof auditStream>;
export type AuditStreamPayload = z.infer<typeof auditStreamPayload>;
