import nodemailer from 'nodemailer';

/** What a message is, for the D3 log line: the line names it instead of carrying its body or link. */
export type MailKind =
  | 'email_verification'
  | 'invite'
  | 'member_added'
  | 'password_reset'
  | 'expiry_reminder'
  | 'change_request_approval'
  | 'change_request_outcome'
  | 'access_request'
  | 'access_request_outcome';

/**
 * A message. Its links (verification, invite, reset: credentials) are only in `text`, which only SMTP ever
 * sends: no field of it is meant for a log.
 */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  kind: MailKind;
}

export interface Mailer {
  send(msg: MailMessage): Promise<void>;
}

/** D3: SMTP_URL=smtp://host:port sends through that server. */
export function smtpMailer(url: string, from: string): Mailer {
  const transport = nodemailer.createTransport(url);
  return {
    async send(msg) {
      await transport.sendMail({ from, to: msg.to, subject: msg.subject, text: msg.text });
    },
  };
}

/**
 * D3 without SMTP_URL: one structured log line per message, with no secret: recipient, subject and kind,
 * never the body or a link. A verification, invite or reset link is a credential (whoever holds it acts as
 * the recipient), and logs are copied, shipped and kept where credentials must not be; without email the
 * dashboard offers what works instead (ADR 0021). Only these three fields are written, whatever else a
 * queued message holds (one queued by an older version may carry a `link`).
 */
export function logMailer(log: { info(obj: object, msg: string): void }): Mailer {
  return {
    async send(msg) {
      log.info(
        { mail: { to: msg.to, subject: msg.subject, kind: msg.kind ?? null } },
        'email not sent (no SMTP_URL configured)',
      );
    },
  };
}
