import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { CoalescedResponse, MAX_WAITING_ANSWERS } from '../src/http/coalesced-response.js';
import { serverOptions, type Tls } from '../src/http/server.js';

/** A GET on a fresh connection: its status and body, or the error if the connection was cut. */
function get(port: number, path: string): Promise<{ status: number; body: string } | Error> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode!, body }));
      res.on('error', resolve);
    });
    req.on('error', resolve);
    req.end();
  });
}

/**
 * A real server with our responses that holds requests until `count` have arrived, then lets `answer` end
 * them all in one synchronous run, as requests read from the sockets in one event-loop turn are.
 */
async function holdingServer(
  count: number,
  answer: (held: { req: IncomingMessage; res: CoalescedResponse }[]) => void,
): Promise<{ server: Server; port: number }> {
  const held: { req: IncomingMessage; res: CoalescedResponse }[] = [];
  const server = createServer({ ServerResponse: CoalescedResponse }, (req, res) => {
    held.push({ req, res: res as CoalescedResponse });
    if (held.length === count) answer(held.splice(0));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

/** http/coalesced-response.ts on real sockets: when an ended answer is written, and that each gets its own. */
describe('answers ended in one turn', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((r) => server?.close(r));
    server = undefined;
  });

  it('are written together at the end of the turn, each to its own client', async () => {
    const sync: { ended: boolean; written: number }[] = [];
    const afterTurn: number[] = [];
    const started = await holdingServer(5, (held) => {
      for (const { req, res } of held) {
        res.end(`answer to ${req.url}`);
        sync.push({ ended: res.writableEnded, written: res.socket!.bytesWritten });
      }
      // Scheduled after the end() calls, so it runs after the group was written. (Each client asked to close,
      // so the answer lets go of its socket once written: the sockets are kept here.)
      const sockets = held.map(({ res }) => res.socket!);
      setImmediate(() => {
        for (const socket of sockets) afterTurn.push(socket.bytesWritten);
      });
    });
    server = started.server;
    const answers = await Promise.all([1, 2, 3, 4, 5].map((i) => get(started.port, `/r${i}`)));
    expect(answers).toEqual([1, 2, 3, 4, 5].map((i) => ({ status: 200, body: `answer to /r${i}` })));
    // Ended as far as a framework can tell, but nothing on the wire until the turn's work is done...
    expect(sync).toEqual(Array.from({ length: 5 }, () => ({ ended: true, written: 0 })));
    // ...and all of it right after.
    expect(afterTurn).toHaveLength(5);
    for (const written of afterTurn) expect(written).toBeGreaterThan(0);
  });

  it(`write at once when ${MAX_WAITING_ANSWERS} are waiting; the rest wait for the end of the turn`, async () => {
    const total = MAX_WAITING_ANSWERS + 8;
    const written: number[] = [];
    const started = await holdingServer(total, (held) => {
      for (const { req, res } of held) res.end(`answer to ${req.url}`);
      for (const { res } of held) written.push(res.socket!.bytesWritten);
    });
    server = started.server;
    const paths = Array.from({ length: total }, (_, i) => `/r${i}`);
    const answers = await Promise.all(paths.map((p) => get(started.port, p)));
    expect(answers).toEqual(paths.map((p) => ({ status: 200, body: `answer to ${p}` })));
    expect(written.slice(0, MAX_WAITING_ANSWERS).every((n) => n > 0)).toBe(true);
    expect(written.slice(MAX_WAITING_ANSWERS)).toEqual(Array(8).fill(0));
  });

  it('still answer the others when one client is gone before its answer is written', async () => {
    const started = await holdingServer(3, (held) => {
      for (const { req, res } of held) res.end(`answer to ${req.url}`);
      held[1]!.res.socket!.destroy();
    });
    server = started.server;
    const [first, second, third] = await Promise.all(['/a', '/b', '/c'].map((p) => get(started.port, p)));
    expect(first).toEqual({ status: 200, body: 'answer to /a' });
    expect(second).toBeInstanceOf(Error);
    expect(third).toEqual({ status: 200, body: 'answer to /c' });
  });

  it('keep the order of pipelined requests on one connection', async () => {
    const started = createServer({ ServerResponse: CoalescedResponse }, (req, res) => res.end(`answer to ${req.url}`));
    server = started;
    await new Promise<void>((r) => started.listen(0, '127.0.0.1', r));
    const { port } = started.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      received += d;
    });
    // Three requests in one packet: Node answers them in order, the second and third waiting for the first.
    socket.write(['/one', '/two', '/three'].map((p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
    for (let i = 0; i < 200 && (received.match(/answer to/g) ?? []).length < 3; i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    socket.destroy();
    expect(received.match(/answer to \/(one|two|three)/g)).toEqual([
      'answer to /one',
      'answer to /two',
      'answer to /three',
    ]);
  });

  it("keep Node's end(): callbacks, a body chunk with its encoding, a refused chunk thrown to the caller", async () => {
    const events: string[] = [];
    const started = await holdingServer(1, ({ 0: held }) => {
      const res = held!.res as ServerResponse;
      expect(() => res.end(42 as unknown as string)).toThrow(/chunk/);
      res.end('6869', 'hex', () => events.push('first callback'));
      res.end(() => events.push('second callback'));
    });
    server = started.server;
    expect(await get(started.port, '/')).toEqual({ status: 200, body: 'hi' });
    await new Promise((r) => setImmediate(r));
    expect(events.sort()).toEqual(['first callback', 'second callback']);
  });
});

describe('Fastify on coalesced answers', () => {
  it('sees a waiting answer as sent, so a second send is refused and the client gets the first', async () => {
    const app = Fastify({ http: { ServerResponse: CoalescedResponse } });
    const seen: boolean[] = [];
    app.get('/twice', (_req, reply) => {
      reply.send('first');
      seen.push(reply.sent);
      reply.send('second');
      return reply;
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = app.server.address() as AddressInfo;
      expect(await get(port, '/twice')).toEqual({ status: 200, body: 'first' });
      expect(seen).toEqual([true]);
    } finally {
      await app.close();
    }
  });
});

describe("the server's settings", () => {
  it('answer with coalesced responses over plain HTTP and over TLS', () => {
    const config = loadConfig({});
    const plain = serverOptions(config, null, undefined) as { http?: { ServerResponse?: unknown } };
    expect(plain.http?.ServerResponse).toBe(CoalescedResponse);
    const tls: Tls = { cert: Buffer.alloc(0), key: Buffer.alloc(0), minVersion: 'TLSv1.2', requireHostHeader: false };
    const secure = serverOptions(config, tls, undefined) as { https?: { ServerResponse?: unknown } };
    expect(secure.https?.ServerResponse).toBe(CoalescedResponse);
  });
});
