import type { Mailer, MailMessage } from '../lib/mail.js';
import { exponentialBackoff, type JobKind } from './queue.js';

/**
 * Email goes out through the job queue, so the request that causes it neither waits for nor fails with the
 * SMTP server, and a message whose server is down is retried (about 30 s, 2 min, 8 min ... up to 1 h,
 * for roughly a day) instead of lost.
 */
export const EMAIL_JOB = 'email.send';

export function emailJob(mailer: Mailer): JobKind<MailMessage> {
  return {
    maxAttempts: 30,
    backoffMs: exponentialBackoff(30_000, 3_600_000),
    // One lane for all mail, at most 8 messages in flight per instance: a burst (an invite wave, a reminder
    // scan) does not open 64 SMTP connections at once (ADR 0010).
    lane: () => 'email',
    laneLimit: 8,
    perform: (msg) => mailer.send(msg),
  };
}
