import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AuditStreamPayload, auditStreamPayload, type WebhookPayload, webhookPayload } from '@svcenv/contract';
import { z } from 'zod';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes of the body, as sent. */
  raw: Buffer;
  /** The body as sent, once it is checked to be a webhook payload of the contract (reading it throws otherwise). */
  body: WebhookPayload;
  /** Real time of arrival. */
  at: number;
}

/** How the receiver answers one request: a status, or hang for `hangMs` before answering 200. */
export type Answer = { status: number } | { hangMs: number };

/**
 * A real HTTP webhook receiver on loopback (tests run with WEBHOOK_ALLOW_PRIVATE=true). It keeps every
 * request with its raw body; `answer` decides the reply per request.
 */
export async function startReceiver(port = 0) {
  const received: Received[] = [];
  let answer: (r: Received, index: number) => Answer = () => ({ status: 200 });
  const hanging = new Set<{ timer: NodeJS.Timeout; res: ServerResponse }>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const r: Received = {
        path: req.url ?? '',
        headers: req.headers,
        raw,
        get body() {
          return payloadOf(raw);
        },
        at: Date.now(),
      };
      received.push(r);
      const a = answer(r, received.length - 1);
      if ('hangMs' in a) {
        const h = {
          res,
          timer: setTimeout(() => {
            hanging.delete(h);
            if (!res.destroyed) res.writeHead(200).end('late');
          }, a.hangMs),
        };
        hanging.add(h);
      } else {
        res.writeHead(a.status, { 'content-type': 'text/plain' }).end('ok');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actualPort = (server.address() as AddressInfo).port;
  return {
    port: actualPort,
    url: (path = '/hook') => `http://127.0.0.1:${actualPort}${path}`,
    received,
    setAnswer(fn: (r: Received, index: number) => Answer) {
      answer = fn;
    },
    /** Waits until at least `n` requests (optionally only those `filter` keeps) arrived. */
    async waitFor(n: number, filter: (r: Received) => boolean = () => true, ms = 15_000): Promise<Received[]> {
      const deadline = Date.now() + ms;
      for (;;) {
        const got = received.filter(filter);
        if (got.length >= n) return got;
        if (Date.now() > deadline) throw new Error(`expected ${n} webhook requests within ${ms} ms, got ${got.length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop() {
      for (const h of hanging) {
        clearTimeout(h.timer);
        h.res.destroy();
      }
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

function payloadOf(raw: Buffer): WebhookPayload {
  const text = raw.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`a webhook delivery whose body is not JSON: ${text}`);
  }
  const result = webhookPayload.safeParse(json);
  if (!result.success)
    throw new Error(`a webhook payload outside the contract: ${z.prettifyError(result.error)}\n${text}`);
  // As sent, not the parsed copy, which would drop a field the contract does not name.
  return json as WebhookPayload;
}

/** An audit stream's batch (D65), once it is checked to be one of the contract: `{entries:[...]}`, as sent. */
export function streamBatchOf(r: Received): AuditStreamPayload {
  const text = r.raw.toString('utf8');
  const result = auditStreamPayload.safeParse(JSON.parse(text));
  if (!result.success) throw new Error(`a batch outside the contract: ${z.prettifyError(result.error)}\n${text}`);
  return JSON.parse(text) as AuditStreamPayload;
}

/**
 * The receiver's side of spec delivery rules 1-2, as docs/webhooks.md shows it: HMAC-SHA256 of the exact raw
 * bytes with the secret, compared in constant time with the X-Svcenv-Signature header.
 */
export function signatureValid(r: Received, secret: string): boolean {
  const header = r.headers['x-svcenv-signature'];
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(r.raw).digest('hex')}`);
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
