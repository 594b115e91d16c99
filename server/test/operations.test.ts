import { operations } from '@svcenv/contract/operations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOperations, startApp, type TestApp } from './harness.js';

/**
 * The contract's registry of operations is what the server registers (server/src/http/operation.ts): every
 * operation is in the OpenAPI document at its path, public exactly when its `auth` is `none`, and the
 * document lists nothing the registry does not (the document itself is not listed).
 */
describe('operations registry and the served API', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  it('serves every operation of the registry, with its credential, and no other', async () => {
    const documented = (await apiOperations(app)).map(
      (op) => `${op.method} ${op.path} ${op.public ? 'public' : 'guarded'}`,
    );
    const registered = Object.values(operations)
      .filter((op) => op !== operations.openapi)
      .map((op) => {
        const path = op.path.replace(/\/:([A-Za-z]+)/g, '/{$1}');
        return `${op.method} ${path} ${op.auth === 'none' ? 'public' : 'guarded'}`;
      });
    expect(documented.sort()).toEqual(registered.sort());
  });
});
