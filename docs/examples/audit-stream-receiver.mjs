// A minimal svcenv audit stream receiver (docs/audit-streams.md), with no dependencies: Node 20+.
//   SVCENV_STREAM_SECRET=whsec_... PORT=3000 [STATE_FILE=last-id] [FORWARD_URL=http://fluent-bit:9880/svcenv.audit] \
//     node audit-stream-receiver.mjs
// Prints each new audit entry as one JSON line; with FORWARD_URL, also POSTs the new entries as a JSON array
// (Fluent Bit's `http` input makes one record of each element) and acknowledges only once that succeeded.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';

const SECRET = process.env.SVCENV_STREAM_SECRET;
const PORT = Number(process.env.PORT ?? 3000);
const STATE_FILE = process.env.STATE_FILE; // where the last handled id survives a restart
const FORWARD_URL = process.env.FORWARD_URL;
const MAX_BODY = 16 * 1024 * 1024; // 500 entries with their details fit well within this

if (!SECRET?.startsWith('whsec_')) throw new Error('set SVCENV_STREAM_SECRET to the whsec_ secret');

// Entries come in id order and none is ever skipped, but a batch may come again (at least once): everything
// at or below the last id handled is a duplicate.
let lastId = 0;
try {
  if (STATE_FILE) lastId = Number(readFileSync(STATE_FILE, 'utf8')) || 0;
} catch {}

function signatureValid(raw, header) {
  // HMAC-SHA256 over the exact raw bytes, never over re-serialized JSON.
  const expected = Buffer.from(`sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}`);
  const given = Buffer.from(String(header ?? ''));
  // timingSafeEqual needs equal lengths; comparing the lengths first leaks nothing secret.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function handle(entries) {
  const fresh = entries.filter((e) => e.id > lastId);
  if (fresh.length === 0) return;
  if (FORWARD_URL) {
    const res = await fetch(FORWARD_URL, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(fresh),
    });
    if (!res.ok) throw new Error(`forward answered ${res.status}`);
  }
  for (const e of fresh) console.log(JSON.stringify(e));
  lastId = fresh[fresh.length - 1].id;
  if (STATE_FILE) writeFileSync(STATE_FILE, String(lastId));
}

// One batch at a time, in the order they arrive.
let queue = Promise.resolve();

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
      res.writeHead(401).end('bad signature'); // svcenv retries; a wrong secret shows as status 401
      return;
    }
    // Only now is the body trusted enough to parse.
    const { entries } = JSON.parse(raw.toString('utf8'));
    queue = queue
      .then(() => handle(entries))
      .then(
        () => res.writeHead(204).end(),
        () => res.writeHead(503).end('try again'), // not acknowledged: svcenv sends the batch again
      );
  });
}).listen(PORT, '127.0.0.1', () => console.log(JSON.stringify({ listening: PORT })));
