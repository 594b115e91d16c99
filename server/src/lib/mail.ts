import nodemailer from 'nodemailer';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** The one link of the message (invite, verification), also written by the log mailer (D3). */
  link?: string;
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

/** D3 without SMTP_URL: one structured log line per message (recipient, subject, link), no body. */
export function logMailer(log: { info(obj: object, msg: string): void }): Mailer {
  return {
    async send(msg) {
      log.info(
        { mail: { to: msg.to, subject: msg.subject, link: msg.link ?? null } },
        'email (no SMTP_URL configured)',
      );
    },
  };
}
