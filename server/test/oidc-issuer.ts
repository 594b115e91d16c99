import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

/**
 * A real OpenID Connect issuer on loopback for the D60 tests and the benchmark: it serves
 * `/.well-known/openid-configuration` and a JWKS of real RS256 and ES256 keys that jose generated, signs real
 * JWTs with them, counts every document it serves, and can rotate its keys, hang, or answer a huge JWKS.
 */
export interface SigningKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function newSigningKey(alg: 'RS256' | 'ES256', kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export type IssuerMode = 'normal' | 'hang' | 'huge';

export async function startIssuer() {
  let keys: SigningKey[] = [await newSigningKey('RS256', 'rsa-1'), await newSigningKey('ES256', 'ec-1')];
  const counts = { discovery: 0, jwks: 0, other: 0 };
  let mode: IssuerMode = 'normal';
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    if (mode === 'hang') {
      hanging.add(res);
      return;
    }
    if (req.url === '/.well-known/openid-configuration') {
      counts.discovery++;
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks` }));
    }
    if (req.url === '/jwks') {
      counts.jwks++;
      res.writeHead(200, { 'content-type': 'application/json' });
      if (mode === 'huge') {
        // 10 MB, streamed without a Content-Length, so only the reader's own cap can stop it.
        const filler = { kty: 'oct', k: 'A'.repeat(1_000_000) };
        res.write('{"keys":[');
        for (let i = 0; i < 10; i++) res.write(`${i ? ',' : ''}${JSON.stringify(filler)}`);
        return res.end(']}');
      }
      return res.end(JSON.stringify({ keys: keys.map((k) => k.publicJwk) }));
    }
    counts.other++;
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    counts,
    get keys() {
      return keys;
    },
    setMode(m: IssuerMode) {
      mode = m;
    },
    /** The issuer rotates: a new RSA key (kid `rsa-<n>`) replaces the old ones. */
    async rotate(kid: string) {
      const k = await newSigningKey('RS256', kid);
      keys = [k, ...keys.filter((x) => x.alg === 'ES256')];
      return k;
    },
    /** A JWT signed by one of the issuer's keys (RS256 by default), claims as given. */
    async sign(
      claims: JWTPayload,
      opts: { alg?: 'RS256' | 'ES256'; key?: SigningKey; header?: Record<string, unknown> } = {},
    ): Promise<string> {
      const key = opts.key ?? keys.find((k) => k.alg === (opts.alg ?? 'RS256'))!;
      return new SignJWT(claims)
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...opts.header })
        .sign(key.privateKey);
    },
    async stop() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type Issuer = Awaited<ReturnType<typeof startIssuer>>;
