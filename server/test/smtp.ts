import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface CapturedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  /** Body text with quoted-printable soft breaks undone. */
  text: string;
}

/** A real SMTP server on loopback that keeps every message it receives (tests read them). */
export async function startSmtpCapture() {
  const mails: CapturedMail[] = [];
  const waiters: (() => void)[] = [];
  let failing = false;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (d) => {
        raw += d;
      });
      stream.on('end', () => {
        if (failing) return callback(new Error('mailbox unavailable'));
        const subject = /^Subject: (.*)$/m.exec(raw)?.[1]?.trim() ?? '';
        const body = raw
          .split(/\r?\n\r?\n/)
          .slice(1)
          .join('\n\n');
        const text = body.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          subject,
          text,
        });
        for (const w of waiters.splice(0)) w();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    /** While true, every message is refused with a 5xx/4xx error (an SMTP server that is down for mail). */
    setFailing(v: boolean) {
      failing = v;
    },
    /** Waits for a message to `to` matching `filter`, up to `ms`. */
    async waitFor(to: string, filter: (m: CapturedMail) => boolean = () => true, ms = 15_000): Promise<CapturedMail> {
      const deadline = Date.now() + ms;
      for (;;) {
        const m = mails.find((x) => x.to.includes(to.toLowerCase()) && filter(x));
        if (m) return m;
        if (Date.now() > deadline) throw new Error(`no email to ${to} within ${ms} ms (got ${mails.length})`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
