import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { operations as ops } from '@svcenv/contract/operations';
import { describe, expect, it } from 'vitest';
import { createProject, createToken, dialectName, freshPgSchema, signupUser, startServer, upsert } from './harness.js';
import { startIssuer } from './oidc-issuer.js';

/**
 * D2: several instances serve the same data with identical behaviour. Each instance caches resolved
 * environments and verified token digests; this checks that a change made through one instance is seen by
 * the other on its very next request (revision check, D33 revocation check).
 */
describe(`two instances on one database (${dialectName})`, () => {
  it('see each other’s writes, revocations and removals at once', async () => {
    const pg = process.env.TEST_DATABASE_URL ? await freshPgSchema() : null;
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-multi-'));
    const env: Record<string, string> = pg
      ? { DATABASE_URL: pg.url, MASTER_KEY: randomBytes(32).toString('base64') }
      : {};
    const a = await startServer({ dataDir, env });
    const b = await startServer({ dataDir, env });
    try {
      const { jwt } = await signupUser(a, 'Multi');
      const p = await createProject(a, jwt);
      const tok = await createToken(a, jwt, { scope: 'read' });
      await upsert(a, jwt, p.id, ['dev'], [{ key: 'A', value: 'one', type: 'plain' }]);
      const url = `/v1/projects/${p.id}/envs/dev/pull?metadata=false`;
      expect((await b.request('GET', url, { token: tok.token })).text).toBe('A=one\n');
      await upsert(a, jwt, p.id, ['dev'], [{ key: 'A', value: 'two', type: 'plain' }]);
      expect((await b.request('GET', url, { token: tok.token })).text).toBe('A=two\n');
      await a.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/A`, { token: jwt, body: { value: 'three' } });
      expect((await b.request('GET', url, { token: tok.token })).text).toBe('A=three\n');
      // A JWT issued by one instance works on the other (shared master key).
      expect((await b.request('GET', `/v1/projects/${p.id}`, { token: jwt })).status).toBe(200);
      // Revocation on A: the token, already verified and cached by B, fails on B's next request.
      expect((await a.request('DELETE', `/v1/tokens/${tok.id}`, { token: jwt })).status).toBe(204);
      expect((await b.request('GET', url, { token: tok.token })).status).toBe(401);
      // Renaming the project changes SVCENV_PROJECT_NAME everywhere.
      const t2 = await createToken(a, jwt);
      await b.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token: t2.token });
      await a.request('PATCH', `/v1/projects/${p.id}`, { token: jwt, body: { name: 'renamed' } });
      expect((await b.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token: t2.token })).text).toContain(
        'SVCENV_PROJECT_NAME=renamed',
      );
    } finally {
      await a.stop();
      await b.stop();
      await pg?.drop();
    }
  });

  it('refuse the token of an updated or deleted identity on the other instance at once (D60)', async () => {
    const pg = process.env.TEST_DATABASE_URL ? await freshPgSchema() : null;
    const dataDir = mkdtempSync(join(tmpdir(), 'svcenv-multi-'));
    const env: Record<string, string> = {
      WEBHOOK_ALLOW_PRIVATE: 'true',
      ...(pg ? { DATABASE_URL: pg.url, MASTER_KEY: randomBytes(32).toString('base64') } : {}),
    };
    const issuer = await startIssuer();
    const a = await startServer({ dataDir, env });
    const b = await startServer({ dataDir, env });
    try {
      const { jwt } = await signupUser(a, 'Multi');
      const p = await createProject(a, jwt);
      await upsert(a, jwt, p.id, ['dev'], [{ key: 'A', value: 'one', type: 'plain' }]);
      const made = await a.call(
        ops.createIdentity,
        { body: { name: 'ci', issuer: issuer.url, audience: 'svcenv', envs: ['dev'], projectId: p.id } },
        jwt,
      );
      expect(made.status).toBe(201);
      const exchange = async () => {
        const platform = await issuer.sign({
          iss: issuer.url,
          aud: 'svcenv',
          sub: 'job',
          exp: Math.floor(Date.now() / 1000) + 60,
        });
        const res = await a.call(ops.oidcLogin, { body: { identity: made.body.id, token: platform } });
        expect(res.status).toBe(201);
        return res.body.token;
      };
      const pullOnB = (token: string) => b.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token });
      const first = await exchange();
      expect((await pullOnB(first)).status).toBe(200);
      await a.call(ops.updateIdentity, { params: { id: made.body.id }, body: { ttlSeconds: 300 } }, jwt);
      expect((await pullOnB(first)).status).toBe(401);
      const second = await exchange();
      expect((await pullOnB(second)).status).toBe(200);
      expect((await a.call(ops.deleteIdentity, { params: { id: made.body.id } }, jwt)).status).toBe(204);
      expect((await pullOnB(second)).status).toBe(401);
    } finally {
      await a.stop();
      await b.stop();
      await issuer.stop();
      await pg?.drop();
    }
  });
});
