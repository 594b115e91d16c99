// A minimal svcenv webhook receiver (docs/webhooks.md), with no dependencies: Node 20+.
//   SVCENV_WEBHOOK_SECRET=whsec_... PORT=3000 node webhook-receiver.mjs
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const SECRET = process.env.SVCENV_WEBHOOK_SECRET;
const PORT = Number(process.env.PORT ?? 3000);
const MAX_AGE_MS = 5 * 60 * 1000; // refuse deliveries signed more than 5 minutes ago (replays)
const MAX_BODY = 1024 * 1024;
// Delivery ids already handled. A delivery is retried for about 75 minutes, so keep ids for 2 hours.
const seen = new Map();

if (!SECRET?.startsWith('whsec_')) throw new Error('set SVCENV_WEBHOOK_SECRET to the whsec_ secret');

function signatureValid(raw, header) {
  // HMAC-SHA256 over the exact raw bytes, never over re-serialized JSON.
  const expected = Buffer.from(`sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`);
  const given = Buffer.from(String(header ?? ''));
  // timingSafeEqual needs equal lengths; comparing the lengths first leaks nothing secret.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) req.destroy();
    else chunks.push(chunk);
  });
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    if (req.method !== 'POST' || !signatureValid(raw, req.headers['x-svcenv-signature'])) {
      res.writeHead(401).end('bad signature');
      return;
    }
    // Only now is the body trusted enough to parse.
    const event = JSON.parse(raw.toString('utf8'));
    const age = Date.now() - Date.parse(event.timestamp);
    if (!(Math.abs(age) <= MAX_AGE_MS)) {
      res.writeHead(400).end('stale delivery'); // a 4xx is final: svcenv does not retry it
      return;
    }
    const id = String(req.headers['x-svcenv-delivery']);
    const now = Date.now();
    for (const [old, at] of seen) if (now - at > 2 * 60 * 60 * 1000) seen.delete(old);
    if (seen.has(id)) {
      res.writeHead(200).end('duplicate'); // already handled: acknowledge, do nothing
      return;
    }
    seen.set(id, now);
    // Handle the event here; answer quickly (svcenv waits at most 10 seconds) and do slow work afterwards.
    console.log(JSON.stringify({ accepted: id, event: event.event, env: event.env, keys: event.keys }));
    res.writeHead(204).end();
  });
}).listen(PORT, '127.0.0.1', () => console.log(JSON.stringify({ listening: PORT })));
