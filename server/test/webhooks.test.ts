import { spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  createWebhookResponse,
  DEFAULT_WEBHOOK_EVENTS,
  historyResponse,
  listDeliveriesResponse,
  listWebhooksResponse,
  revisionsResponse,
  sessionResponse,
  switchWorkspaceResponse,
  testWebhookResponse,
  WEBHOOK_EVENTS,
  type WebhookDelivery,
  webhook,
} from '@svcenv/contract';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/lib/clock.js';
import { systemResolver } from '../src/lib/net-guard.js';
import {
  createProject,
  createToken,
  dialectName,
  freePort,
  repoRoot,
  signupUser,
  startApp,
  type TestApp,
  upsert,
} from './harness.js';
import { type Received, type Receiver, signatureValid, startReceiver } from './receiver.js';

const PAYLOAD_FIELDS = ['actor', 'created', 'env', 'event', 'keys', 'projectId', 'timestamp', 'updated'];
const ALL_EVENTS = ['var.update', 'var.delete', 'var.restore', 'vars.bulk_upsert', 'vars.bulk_delete', 'vars.pull'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function createHook(app: TestApp, jwt: string, body: Record<string, unknown>) {
  const res = await app.request('POST', '/v1/workspace/webhooks', {
    token: jwt,
    body: { name: 'hook', ...body },
    schema: createWebhookResponse,
  });
  if (res.status !== 201) throw new Error(`create webhook failed: ${res.status} ${res.text}`);
  return res.body;
}

/** Polls `read` until `ok` holds (attempts are recorded just after the receiver answered). */
async function eventually<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A Member (not Owner) session in the owner's workspace. */
async function memberSession(app: TestApp, ownerJwt: string) {
  const session = await app.request('GET', '/v1/auth/session', { token: ownerJwt, schema: sessionResponse });
  const workspaceId = session.body.user.workspaceId;
  const m = await signupUser(app, 'Mia');
  // Joined at the app's own (fake) time: a session issued before the membership began is refused (D9), so a
  // wall-clock time later than the fake clock would void the JWT that switch-workspace issues below.
  await app.db.db
    .insertInto('workspace_members')
    .values({
      workspace_id: workspaceId,
      user_id: m.user.id,
      ws_role: 'Member',
      joined_at: app.deps.clock.now().toISOString(),
    })
    .execute();
  const sw = await app.request('POST', '/v1/auth/switch-workspace', {
    token: m.jwt,
    body: { workspaceId },
    schema: switchWorkspaceResponse,
  });
  expect(sw.status).toBe(200);
  return sw.body.token;
}

describe(`webhooks with private targets allowed (${dialectName})`, () => {
  let app: TestApp;
  let rx: Receiver;
  const clock = new ManualClock(new Date('2026-12-01T10:00:00.000Z'));
  beforeAll(async () => {
    app = await startApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx.stop();
    await app.stop();
  });
  afterEach(() => rx.setAnswer(() => ({ status: 200 })));

  it('creates, lists, updates and deletes webhooks; the secret is shown once and never logged (D34, D36)', async () => {
    const { jwt } = await signupUser(app);
    const url = `${rx.url('/crud')}?token=QUERY_SECRET_123`;
    const created = await app.request('POST', '/v1/workspace/webhooks', {
      token: jwt,
      body: { name: 'CI', url, events: ['var.update', 'vars.pull', 'var.update'] },
      schema: createWebhookResponse,
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'CI',
      url,
      events: ['var.update', 'vars.pull'],
      active: true,
      projectId: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9]{40}$/),
    });
    const { id, secret } = created.body;

    const list = await app.request('GET', '/v1/workspace/webhooks', { token: jwt, schema: listWebhooksResponse });
    expect(list.status).toBe(200);
    expect(list.body.webhooks).toEqual([
      {
        id,
        name: 'CI',
        url,
        events: ['var.update', 'vars.pull'],
        active: true,
        projectId: null,
        lastFiredAt: null,
        lastStatus: null,
        createdAt: clock.now().toISOString(),
      },
    ]);
    expect(list.text).not.toContain(secret);

    const patched = await app.request('PATCH', `/v1/workspace/webhooks/${id}`, {
      token: jwt,
      body: { name: 'CD', events: ['vars.bulk_delete'], active: false },
      schema: webhook,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, name: 'CD', url, events: ['vars.bulk_delete'], active: false });
    expect(patched.body).not.toHaveProperty('secret');
    const reactivated = await app.request('PATCH', `/v1/workspace/webhooks/${id}`, {
      token: jwt,
      body: { active: true },
      schema: webhook,
    });
    expect(reactivated.body).toMatchObject({ name: 'CD', active: true });

    const inactiveByRequest = await createHook(app, jwt, { url: rx.url(), events: ['var.update'], active: false });
    expect(inactiveByRequest.active).toBe(false);

    expect((await app.request('DELETE', `/v1/workspace/webhooks/${id}`, { token: jwt })).status).toBe(204);
    expect((await app.request('DELETE', `/v1/workspace/webhooks/${id}`, { token: jwt })).status).toBe(404);
    expect(
      (await app.request('PATCH', `/v1/workspace/webhooks/${id}`, { token: jwt, body: { name: 'x' } })).status,
    ).toBe(404);
    const after = await app.request('GET', '/v1/workspace/webhooks', { token: jwt, schema: listWebhooksResponse });
    expect(after.body.webhooks.map((w) => w.id)).toEqual([inactiveByRequest.id]);

    await app.deps.auditBatcher.drain();
    const audit = await app.db.db
      .selectFrom('audit_logs')
      .selectAll()
      .where('action', 'like', 'webhook.%')
      .where('detail', 'like', `%${id}%`)
      .orderBy('id')
      .execute();
    expect(audit.map((a) => a.action)).toEqual([
      'webhook.create',
      'webhook.update',
      'webhook.update',
      'webhook.delete',
    ]);
    expect(JSON.parse(audit[0]!.detail!)).toEqual({
      webhookId: id,
      name: 'CI',
      host: `127.0.0.1:${rx.port}`,
      events: ['var.update', 'vars.pull'],
      active: true,
    });
    const everything = JSON.stringify(audit) + app.logs();
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain('QUERY_SECRET_123');
    const stored = await app.db.db.selectFrom('webhooks').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(inactiveByRequest.secret);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const { jwt } = await signupUser(app);
    const cases: [unknown, string][] = [
      [{ name: 'x', url: 'not a url', events: ['var.update'] }, 'url'],
      [{ name: 'x', url: 'ftp://127.0.0.1/x', events: ['var.update'] }, 'url'],
      [{ name: 'x', url: 'https://user:pw@127.0.0.1/x', events: ['var.update'] }, 'url'],
      [{ name: 'x', url: rx.url(), events: ['var.create'] }, 'events.0'],
      [{ name: 'x', url: rx.url(), events: ['ping'] }, 'events.0'],
      [{ name: 'x', url: rx.url(), events: [] }, 'events'],
      [{ name: '', url: rx.url(), events: ['var.update'] }, 'name'],
      [{ name: 'x', url: rx.url(), events: ['var.update'], active: 'yes' }, 'active'],
      [{ name: 'x', url: rx.url(), events: ['var.update'], secret: 'whsec_mine' }, 'secret'],
      [{ url: rx.url(), events: ['var.update'] }, 'name'],
    ];
    for (const [body, field] of cases) {
      const res = await app.request('POST', '/v1/workspace/webhooks', { token: jwt, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.error).toMatchObject({ code: 'VALIDATION', field });
    }
    const hook = await createHook(app, jwt, { url: rx.url(), events: ['var.update'] });
    const bad = await app.request('PATCH', `/v1/workspace/webhooks/${hook.id}`, { token: jwt, body: { url: 'x:' } });
    expect(bad.status).toBe(400);
    expect(bad.error.field).toBe('url');
    const notUuid = await app.request('PATCH', '/v1/workspace/webhooks/nope', { token: jwt, body: { name: 'y' } });
    expect(notUuid.status).toBe(400);
  });

  it('is managed by Owners only and JWT-only; Members may read; another workspace’s webhook is 404 (D10, spec Owner-only operations)', async () => {
    const { jwt } = await signupUser(app);
    const hook = await createHook(app, jwt, { url: rx.url(), events: ['var.update'] });
    const member = await memberSession(app, jwt);
    const token = (await createToken(app, jwt, { scope: 'write' })).token;
    const calls: [string, string, unknown?][] = [
      ['GET', '/v1/workspace/webhooks'],
      ['POST', '/v1/workspace/webhooks', { name: 'x', url: rx.url(), events: ['var.update'] }],
      ['PATCH', `/v1/workspace/webhooks/${hook.id}`, { name: 'x' }],
      ['DELETE', `/v1/workspace/webhooks/${hook.id}`],
      ['GET', `/v1/workspace/webhooks/${hook.id}/deliveries`],
      ['POST', `/v1/workspace/webhooks/${hook.id}/test`],
    ];
    for (const [method, path, body] of calls) {
      expect((await app.request(method, path, { body })).status, `${method} ${path} anonymous`).toBe(401);
      expect((await app.request(method, path, { token, body })).status, `${method} ${path} token`).toBe(401);
      const asMember = await app.request(method, path, { token: member, body });
      if (method === 'GET') {
        // Listing is not among the spec's Owner-only operations: a Member sees webhooks and their deliveries,
        // never a secret.
        expect(asMember.status, `${method} ${path} member`).toBe(200);
        expect(JSON.stringify(asMember.body)).not.toContain('whsec_');
      } else {
        expect(asMember.status, `${method} ${path} member`).toBe(403);
        expect(asMember.error.code).toBe('FORBIDDEN');
      }
    }
    const seen = await app.request('GET', '/v1/workspace/webhooks', { token: member, schema: listWebhooksResponse });
    expect(seen.body.webhooks.map((w) => w.id)).toEqual([hook.id]);
    const other = await signupUser(app, 'Eve');
    for (const [method, path, body] of calls.slice(2)) {
      expect((await app.request(method, path, { token: other.jwt, body })).status, `${method} ${path}`).toBe(404);
    }
    const none = await app.request('GET', '/v1/workspace/webhooks', { token: other.jwt, schema: listWebhooksResponse });
    expect(none.body.webhooks).toEqual([]);
  });

  it('sends every event kind with all eight payload fields, signed over the raw body (D34, spec Delivery)', async () => {
    const { jwt, user } = await signupUser(app, 'Grace');
    const p = await createProject(app, jwt);
    const path = `/all-${p.id}`;
    const hook = await createHook(app, jwt, { url: rx.url(path), events: ALL_EVENTS });
    const tok = await createToken(app, jwt, { scope: 'write', name: 'deployer' });
    const mine = (r: Received) => r.path === path;
    let seen = 0;
    const next = async (n = 1) => {
      const got = await rx.waitFor(seen + n, mine);
      const fresh = got.slice(seen, seen + n);
      seen += n;
      return fresh;
    };
    const base = `/v1/projects/${p.id}/envs`;

    await upsert(app, jwt, p.id, ['dev'], [{ key: 'OLD', value: 'old-value-1', type: 'secret' }]);
    const [first] = await next();
    expect(first!.body).toEqual({
      event: 'vars.bulk_upsert',
      projectId: p.id,
      env: 'dev',
      actor: user.name,
      keys: ['OLD'],
      created: ['OLD'],
      updated: [],
      timestamp: clock.now().toISOString(),
    });

    // One delivery per environment (D34), each with that environment's created/updated.
    await upsert(
      app,
      jwt,
      p.id,
      ['dev', 'staging'],
      [
        { key: 'OLD', value: 'old-value-2', type: 'secret' },
        { key: 'NEW', value: 'new-value-1', type: 'plain' },
      ],
    );
    const perEnv = (await next(2)).map((r) => r.body).sort((a, b) => (a.env ?? '').localeCompare(b.env ?? ''));
    expect(perEnv).toMatchObject([
      { event: 'vars.bulk_upsert', env: 'dev', keys: ['NEW', 'OLD'], created: ['NEW'], updated: ['OLD'] },
      { event: 'vars.bulk_upsert', env: 'staging', keys: ['OLD', 'NEW'], created: ['OLD', 'NEW'], updated: [] },
    ]);

    const put = await app.request('PUT', `${base}/dev/vars/OLD`, { token: tok.token, body: { value: 'old-value-3' } });
    expect(put.status).toBe(200);
    const [update] = await next();
    expect(update!.body).toMatchObject({
      event: 'var.update',
      env: 'dev',
      actor: 'token:deployer',
      keys: ['OLD'],
      created: [],
      updated: ['OLD'],
    });

    expect((await app.request('DELETE', `${base}/dev/vars/OLD`, { token: jwt })).status).toBe(204);
    const [del] = await next();
    expect(del!.body).toMatchObject({ event: 'var.delete', keys: ['OLD'], created: [], updated: [] });

    const hist = await app.request('GET', `${base}/dev/vars/OLD/history`, { token: jwt, schema: historyResponse });
    const deletedEntry = hist.body.history.find((h) => h.action === 'deleted')!;
    await app.request('POST', `${base}/dev/vars/OLD/restore`, { token: jwt, body: { versionId: deletedEntry.id } });
    const [recreated] = await next();
    expect(recreated!.body).toMatchObject({ event: 'var.restore', keys: ['OLD'], created: ['OLD'], updated: [] });
    await app.request('POST', `${base}/dev/vars/OLD/restore`, { token: jwt, body: { versionId: deletedEntry.id } });
    const [restored] = await next();
    expect(restored!.body).toMatchObject({ event: 'var.restore', keys: ['OLD'], created: [], updated: ['OLD'] });

    const pulled = await app.request('GET', `${base}/staging/pull`, { token: tok.token });
    expect(pulled.status).toBe(200);
    const [pull] = await next();
    expect(pull!.body).toMatchObject({
      event: 'vars.pull',
      env: 'staging',
      actor: 'token:deployer',
      keys: ['NEW', 'OLD'],
      created: [],
      updated: [],
    });

    const bulkDel = await app.request('POST', `${base}/dev/vars:bulkDelete`, {
      token: jwt,
      body: { keys: ['NEW', 'MISSING'] },
    });
    expect(bulkDel.body).toEqual({ deleted: 1 });
    const [bulk] = await next();
    expect(bulk!.body).toMatchObject({
      event: 'vars.bulk_delete',
      env: 'dev',
      keys: ['NEW'],
      created: [],
      updated: [],
    });

    const all = rx.received.filter(mine);
    expect(all).toHaveLength(9);
    const ids = new Set<string>();
    for (const r of all) {
      expect(Object.keys(r.body).sort()).toEqual(PAYLOAD_FIELDS);
      expect(r.body.projectId).toBe(p.id);
      expect(r.body.timestamp).toBe(clock.now().toISOString());
      expect(signatureValid(r, hook.secret)).toBe(true);
      expect(signatureValid(r, `${hook.secret}x`)).toBe(false);
      expect(r.headers['x-svcenv-event']).toBe(r.body.event);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['x-svcenv-delivery']).toMatch(UUID);
      ids.add(r.headers['x-svcenv-delivery'] as string);
      // Keys only: no value ever travels in a payload.
      expect(r.raw.toString()).not.toMatch(/old-value|new-value/);
    }
    expect(ids.size).toBe(9);
    const listed = await eventually(
      () => app.request('GET', '/v1/workspace/webhooks', { token: jwt, schema: listWebhooksResponse }),
      (r) => r.body.webhooks[0]?.lastStatus === 200,
    );
    expect(listed.body.webhooks[0]).toMatchObject({ lastStatus: 200, lastFiredAt: clock.now().toISOString() });
  });

  it('subscribes a webhook created without events to every change event, not to pulls (ADR 0004)', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const path = `/default-${p.id}`;
    const hook = await createHook(app, jwt, { url: rx.url(path) });
    const changes = WEBHOOK_EVENTS.filter((e) => e !== 'vars.pull');
    expect(hook.events).toEqual(changes);
    expect(DEFAULT_WEBHOOK_EVENTS).toEqual(changes);
    // The ones the earlier default (the dashboard's three) missed.
    for (const e of [
      'env.rollback',
      'var.restore',
      'vars.bulk_delete',
      'change_request.open',
      'change_request.apply',
    ]) {
      expect(hook.events).toContain(e);
    }
    const listed = await app.request('GET', '/v1/workspace/webhooks', { token: jwt, schema: listWebhooksResponse });
    expect(listed.body.webhooks.find((h) => h.id === hook.id)?.events).toEqual(changes);

    // Every change, in order: a save, an edit, a rollback to the save, a restore of the edit, a bulk delete.
    const base = `/v1/projects/${p.id}/envs/dev`;
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: 'one', type: 'plain' }]);
    const saved = await app.request('GET', `${base}/revisions`, { token: jwt, schema: revisionsResponse });
    expect((await app.request('PUT', `${base}/vars/A`, { token: jwt, body: { value: 'two' } })).status).toBe(200);
    const rollback = await app.request('POST', `${base}/rollback`, {
      token: jwt,
      body: { revision: saved.body.revisions[0]!.revision },
    });
    expect(rollback.status, rollback.text).toBe(200);
    const hist = await app.request('GET', `${base}/vars/A/history`, { token: jwt, schema: historyResponse });
    const edit = hist.body.history.find((h) => h.action === 'updated' && h.value === 'two')!;
    const restore = await app.request('POST', `${base}/vars/A/restore`, { token: jwt, body: { versionId: edit.id } });
    expect(restore.status, restore.text).toBe(200);
    const del = await app.request('POST', `${base}/vars:bulkDelete`, { token: jwt, body: { keys: ['A'] } });
    expect(del.status).toBe(200);
    // And a pull, which a default subscription does not hear.
    const { token } = await createToken(app, jwt, { scope: 'read' });
    expect((await app.request('GET', `${base}/pull`, { token })).status).toBe(200);

    const mine = (r: Received) => r.path === path;
    await rx.waitFor(5, mine);
    await eventually(
      () => app.db.db.selectFrom('jobs').select('id').where('status', 'in', ['pending', 'running']).execute(),
      (rows) => rows.length === 0,
    );
    expect(rx.received.filter(mine).map((r) => r.body.event)).toEqual([
      'vars.bulk_upsert',
      'var.update',
      'env.rollback',
      'var.restore',
      'vars.bulk_delete',
    ]);
  });

  it('sends nothing to an inactive webhook or one not subscribed to the event (spec delivery rule 5)', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const tag = p.id.slice(0, 8);
    const inactive = await createHook(app, jwt, { url: rx.url(`/inactive-${tag}`), events: ALL_EVENTS, active: false });
    await createHook(app, jwt, { url: rx.url(`/other-${tag}`), events: ['vars.bulk_delete'] });
    const control = await createHook(app, jwt, { url: rx.url(`/control-${tag}`), events: ['vars.bulk_upsert'] });
    const to = (name: string) => (r: Received) => r.path === `/${name}-${tag}`;

    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: 'a', type: 'plain' }]);
    await rx.waitFor(1, to('control'));
    // Deactivate the control: the next event reaches nobody.
    await app.request('PATCH', `/v1/workspace/webhooks/${control.id}`, { token: jwt, body: { active: false } });
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'B', value: 'b', type: 'plain' }]);
    await app.request('PATCH', `/v1/workspace/webhooks/${inactive.id}`, {
      token: jwt,
      body: { events: ['var.delete'] },
    });
    await app.request('PATCH', `/v1/workspace/webhooks/${inactive.id}`, { token: jwt, body: { active: true } });
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'C', value: 'c', type: 'plain' }]);
    // A later event the re-activated hook does subscribe to arrives; then wait until no delivery is left.
    await app.request('DELETE', `/v1/projects/${p.id}/envs/dev/vars/C`, { token: jwt });
    await rx.waitFor(1, to('inactive'));
    const open = await eventually(
      () => app.db.db.selectFrom('jobs').select('id').where('status', 'in', ['pending', 'running']).execute(),
      (rows) => rows.length === 0,
    );
    expect(open).toEqual([]);
    expect(rx.received.filter(to('control'))).toHaveLength(1);
    expect(rx.received.filter(to('other'))).toHaveLength(0);
    expect(rx.received.filter(to('inactive')).map((r) => r.body.event)).toEqual(['var.delete']);
  });

  it('sends a signed ping on test, also to an inactive webhook, and lists attempts (D35)', async () => {
    const { jwt, user } = await signupUser(app);
    const hook = await createHook(app, jwt, { url: rx.url('/ping'), events: ['var.update'], active: false });
    const res = await app.request('POST', `/v1/workspace/webhooks/${hook.id}/test`, {
      token: jwt,
      schema: testWebhookResponse,
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ deliveryId: expect.stringMatching(UUID), event: 'ping' });
    const [ping] = await rx.waitFor(1, (r) => r.headers['x-svcenv-delivery'] === res.body.deliveryId);
    expect(ping!.body).toEqual({
      event: 'ping',
      projectId: null,
      env: null,
      actor: user.name,
      keys: [],
      created: [],
      updated: [],
      timestamp: clock.now().toISOString(),
    });
    expect(signatureValid(ping!, hook.secret)).toBe(true);
    expect(ping!.headers['x-svcenv-event']).toBe('ping');
    const deliveries = await eventually(
      () =>
        app.request('GET', `/v1/workspace/webhooks/${hook.id}/deliveries`, {
          token: jwt,
          schema: listDeliveriesResponse,
        }),
      (r) => r.body.deliveries.length > 0,
    );
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.deliveries).toEqual([
      {
        id: res.body.deliveryId,
        event: 'ping',
        attempt: 1,
        status: 200,
        durationMs: expect.any(Number),
        error: null,
        createdAt: clock.now().toISOString(),
      },
    ]);
  });
});

describe(`webhook retries on the injected clock (${dialectName})`, () => {
  let app: TestApp;
  let rx: Receiver;
  const clock = new ManualClock(new Date('2026-12-01T10:00:00.000Z'));
  beforeAll(async () => {
    app = await startApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    // Tests drive the runner by hand, so each step happens exactly when the clock says.
    await app.deps.jobs.stop();
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx.stop();
    await app.stop();
  });

  async function setup(path: string, answer: (index: number) => number) {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const hook = await createHook(app, jwt, { url: rx.url(path), events: ['vars.bulk_upsert'] });
    let n = 0;
    rx.setAnswer((r) => (r.path === path ? { status: answer(n++) } : { status: 200 }));
    // Sends the signup's verification email first, so that runDue() below counts deliveries only.
    await app.deps.jobs.runDue();
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: 'a', type: 'plain' }]);
    const deliveries = async () =>
      (
        await app.request('GET', `/v1/workspace/webhooks/${hook.id}/deliveries`, {
          token: jwt,
          schema: listDeliveriesResponse,
        })
      ).body.deliveries;
    const webhook = async () =>
      (
        await app.request('GET', '/v1/workspace/webhooks', { token: jwt, schema: listWebhooksResponse })
      ).body.webhooks.find((w) => w.id === hook.id);
    const got = () => rx.received.filter((r) => r.path === path);
    return { hook, deliveries, webhook, got };
  }

  it('retries 5xx and 429 after about 30 s, 2 min, 10 min, 1 h, then gives up after 5 attempts (D35)', async () => {
    const { hook, deliveries, webhook, got } = await setup('/retry', (i) => (i === 1 ? 429 : 503));
    expect(await app.deps.jobs.runDue()).toBe(1);
    for (const wait of [30_000, 120_000, 600_000, 3_600_000]) {
      clock.advance(wait - 1_000);
      expect(await app.deps.jobs.runDue()).toBe(0);
      clock.advance(1_000);
      expect(await app.deps.jobs.runDue()).toBe(1);
    }
    clock.advance(24 * 3_600_000);
    expect(await app.deps.jobs.runDue()).toBe(0);
    const sent = got();
    expect(sent).toHaveLength(5);
    // Same delivery id on every attempt; each attempt is signed afresh with its own timestamp.
    expect(new Set(sent.map((r) => r.headers['x-svcenv-delivery'])).size).toBe(1);
    expect(new Set(sent.map((r) => r.body.timestamp)).size).toBe(5);
    for (const r of sent) expect(signatureValid(r, hook.secret)).toBe(true);
    const list = await deliveries();
    expect(list.map((d) => [d.attempt, d.status])).toEqual([
      [5, 503],
      [4, 503],
      [3, 503],
      [2, 429],
      [1, 503],
    ]);
    expect(await webhook()).toMatchObject({ lastStatus: 503 });
    const job = await app.db.db
      .selectFrom('jobs')
      .selectAll()
      .where('kind', '=', 'webhook.deliver')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(job).toMatchObject({ status: 'dead', attempts: 5 });
    expect(job.last_error).toBe('webhook delivery failed: status 503');
  });

  it('delivers on a later attempt after a 500, and stops at once on a 404 (other 4xx are final)', async () => {
    const ok = await setup('/recover', (i) => (i === 0 ? 500 : 204));
    await app.deps.jobs.runDue();
    clock.advance(30_000);
    await app.deps.jobs.runDue();
    expect((await ok.deliveries()).map((d) => [d.attempt, d.status])).toEqual([
      [2, 204],
      [1, 500],
    ]);
    expect(await ok.webhook()).toMatchObject({ lastStatus: 204, lastFiredAt: clock.now().toISOString() });

    const gone = await setup('/gone', () => 404);
    await app.deps.jobs.runDue();
    clock.advance(2 * 3_600_000);
    await app.deps.jobs.runDue();
    expect(gone.got()).toHaveLength(1);
    expect((await gone.deliveries()).map((d) => [d.attempt, d.status])).toEqual([[1, 404]]);
    expect(await gone.webhook()).toMatchObject({ lastStatus: 404 });
  });

  it('records status 0 and retries when the receiver is unreachable; a redirect is not followed', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const closed = await startReceiver();
    const deadUrl = closed.url('/down');
    await closed.stop();
    const hook = await createHook(app, jwt, { url: deadUrl, events: ['vars.bulk_upsert'] });
    const redirect = await createHook(app, jwt, { url: rx.url('/moved'), events: ['vars.bulk_upsert'] });
    rx.setAnswer((r) => ({ status: r.path === '/moved' ? 307 : 200 }));
    await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: 'a', type: 'plain' }]);
    await app.deps.jobs.runDue();
    const attempts = await app.request('GET', `/v1/workspace/webhooks/${hook.id}/deliveries`, {
      token: jwt,
      schema: listDeliveriesResponse,
    });
    expect(attempts.body.deliveries).toMatchObject([{ attempt: 1, status: 0, error: 'network error ECONNREFUSED' }]);
    const list = await app.request('GET', '/v1/workspace/webhooks', { token: jwt, schema: listWebhooksResponse });
    expect(list.body.webhooks.find((w) => w.id === hook.id)).toMatchObject({ lastStatus: 0 });
    const pending = await app.db.db
      .selectFrom('jobs')
      .select(['status', 'run_at'])
      .where('kind', '=', 'webhook.deliver')
      .where('status', '=', 'pending')
      .execute();
    expect(pending).toEqual([{ status: 'pending', run_at: new Date(clock.now().getTime() + 30_000).toISOString() }]);
    const moved = await app.request('GET', `/v1/workspace/webhooks/${redirect.id}/deliveries`, {
      token: jwt,
      schema: listDeliveriesResponse,
    });
    expect(moved.body.deliveries).toMatchObject([{ attempt: 1, status: 307 }]);
    expect(rx.received.filter((r) => r.path === '/moved')).toHaveLength(1);
    expect(app.logs()).not.toContain(deadUrl);
  });
});

describe(`webhook delivery timeout (${dialectName})`, () => {
  it('cuts a hanging receiver at 10 s, records status 0, retries on the clock; the API stays fast', async () => {
    const clock = new ManualClock(new Date('2026-12-01T10:00:00.000Z'));
    const app = await startApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    const rx = await startReceiver();
    try {
      const { jwt } = await signupUser(app);
      const p = await createProject(app, jwt);
      const hook = await createHook(app, jwt, { url: rx.url('/slow'), events: ['var.update'] });
      rx.setAnswer((_r, i) => (i === 0 ? { hangMs: 15_000 } : { status: 200 }));
      await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: 'a', type: 'plain' }]);
      const token = (await createToken(app, jwt)).token;
      const started = performance.now();
      await app.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/A`, { token: jwt, body: { value: 'b' } });
      await rx.waitFor(1);
      // While the delivery hangs, requests (including ones that enqueue more deliveries) answer promptly.
      const latencies: number[] = [];
      while (performance.now() - started < 8_000) {
        const t = performance.now();
        const put = await app.request('PUT', `/v1/projects/${p.id}/envs/dev/vars/A`, {
          token: jwt,
          body: { value: 'c' },
        });
        const pull = await app.request('GET', `/v1/projects/${p.id}/envs/dev/pull`, { token });
        expect([put.status, pull.status]).toEqual([200, 200]);
        latencies.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(latencies.length).toBeGreaterThan(10);
      expect(Math.max(...latencies)).toBeLessThan(1_000);

      const deliveries = async () =>
        (
          await app.request('GET', `/v1/workspace/webhooks/${hook.id}/deliveries`, {
            token: jwt,
            schema: listDeliveriesResponse,
          })
        ).body.deliveries;
      let timedOut: WebhookDelivery | undefined;
      for (let i = 0; i < 100 && !timedOut; i++) {
        timedOut = (await deliveries()).find((d) => d.attempt === 1 && d.status === 0);
        if (!timedOut) await new Promise((r) => setTimeout(r, 100));
      }
      expect(timedOut).toMatchObject({ status: 0, error: 'timeout' });
      const first = timedOut!;
      expect(first.durationMs).toBeGreaterThanOrEqual(9_900);
      expect(first.durationMs).toBeLessThan(12_000);
      const firstArrival = rx.received[0]!;
      expect(firstArrival.headers['x-svcenv-delivery']).toBe(first.id);

      // The retry is due 30 s later on the injected clock.
      clock.advance(30_000);
      app.deps.jobs.kick();
      const again = await rx.waitFor(2, (r) => r.headers['x-svcenv-delivery'] === first.id);
      expect(again).toHaveLength(2);
      expect(signatureValid(again[1]!, hook.secret)).toBe(true);
      for (let i = 0; i < 100; i++) {
        if ((await deliveries()).some((d) => d.id === first.id && d.attempt === 2)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await deliveries()).find((d) => d.id === first.id && d.attempt === 2)).toMatchObject({
        status: 200,
      });
    } finally {
      await rx.stop();
      await app.stop();
    }
  }, 60_000);
});

describe(`webhook SSRF guard with private targets refused (${dialectName}, D5)`, () => {
  let app: TestApp;
  let rx: Receiver;
  let rebindCalls = 0;
  const clock = new ManualClock(new Date('2026-12-01T10:00:00.000Z'));
  beforeAll(async () => {
    rx = await startReceiver();
    app = await startApp({
      clock,
      // DNS for one test name answers a public address first, then loopback (rebinding); the rest is real DNS.
      resolve: async (host) => {
        if (host === 'rebind.svcenv.test') {
          return rebindCalls++ === 0
            ? [{ address: '93.184.216.34', family: 4 }]
            : [{ address: '127.0.0.1', family: 4 }];
        }
        return systemResolver(host);
      },
    });
    await app.deps.jobs.stop();
  });
  afterAll(async () => {
    await rx.stop();
    await app.stop();
  });

  it('refuses private, loopback, link-local and non-https targets at create and update', async () => {
    const { jwt } = await signupUser(app);
    for (const url of [
      `http://93.184.216.34/hook`,
      'https://127.0.0.1/hook',
      'https://localhost/hook',
      'https://10.1.2.3/hook',
      'https://172.16.0.1/hook',
      'https://192.168.1.1/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/hook',
      'https://0.0.0.0/hook',
      'https://[::1]/hook',
      'https://[fe80::1]/hook',
      'https://[fd00::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://0x7f.1/hook',
      'https://2130706433/hook',
    ]) {
      const res = await app.request('POST', '/v1/workspace/webhooks', {
        token: jwt,
        body: { name: 'x', url, events: ['var.update'] },
      });
      expect(res.status, url).toBe(400);
      expect(res.error).toMatchObject({ code: 'VALIDATION', field: 'url' });
    }
    const ok = await createHook(app, jwt, { url: 'https://93.184.216.34/hook', events: ['var.update'] });
    const patched = await app.request('PATCH', `/v1/workspace/webhooks/${ok.id}`, {
      token: jwt,
      body: { url: 'https://192.168.0.10/hook' },
    });
    expect(patched.status).toBe(400);
    expect(patched.error.field).toBe('url');
    const list = await app.request('GET', '/v1/workspace/webhooks', { token: jwt, schema: listWebhooksResponse });
    expect(list.body.webhooks[0]?.url).toBe('https://93.184.216.34/hook');
  });

  it('refuses at delivery time after DNS resolution, without connecting (rebinding, setting turned off)', async () => {
    const { jwt } = await signupUser(app);
    const p = await createProject(app, jwt);
    const connections: number[] = [];
    const { createServer } = await import('node:net');
    const trap = createServer((s) => {
      connections.push(Date.now());
      s.destroy();
    });
    await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r));
    const port = (trap.address() as { port: number }).port;
    try {
      // Resolves to a public address when created, to loopback when delivered.
      const rebind = await createHook(app, jwt, {
        url: `https://rebind.svcenv.test:${port}/hook`,
        events: ['vars.bulk_upsert'],
      });
      // Created while private targets were allowed, delivered after the setting was turned off; real DNS.
      const legacy = await createHook(app, jwt, { url: 'https://93.184.216.34/hook', events: ['vars.bulk_upsert'] });
      await app.db.db
        .updateTable('webhooks')
        .set({ url: `https://localhost:${port}/hook` })
        .where('id', '=', legacy.id)
        .execute();

      await app.deps.jobs.runDue(); // the signup's verification email
      await upsert(app, jwt, p.id, ['dev'], [{ key: 'A', value: 'a', type: 'plain' }]);
      expect(await app.deps.jobs.runDue()).toBe(2);
      clock.advance(2 * 3_600_000);
      expect(await app.deps.jobs.runDue()).toBe(0);
      for (const hook of [rebind, legacy]) {
        const res = await app.request('GET', `/v1/workspace/webhooks/${hook.id}/deliveries`, {
          token: jwt,
          schema: listDeliveriesResponse,
        });
        expect(res.body.deliveries).toMatchObject([
          { attempt: 1, status: 0, error: 'target refused: private address' },
        ]);
      }
      expect(connections).toEqual([]);
      const jobs = await app.db.db.selectFrom('jobs').select('status').where('kind', '=', 'webhook.deliver').execute();
      expect(jobs.map((j) => j.status)).toEqual(['dead', 'dead']);
    } finally {
      await new Promise<void>((r) => trap.close(() => r()));
    }
  });
});

describe(`the receiver example of docs/webhooks.md (${dialectName})`, () => {
  it('accepts a real delivery, refuses a forged or stale one, and acknowledges a duplicate', async () => {
    const app = await startApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    const port = await freePort();
    const { jwt } = await signupUser(app);
    const hook = await createHook(app, jwt, { url: `http://127.0.0.1:${port}/`, events: ['var.update'] });
    const child = spawn(process.execPath, [join(repoRoot, 'docs', 'examples', 'webhook-receiver.mjs')], {
      env: { PATH: process.env.PATH ?? '', PORT: String(port), SVCENV_WEBHOOK_SECRET: hook.secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
    });
    const lines = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const waitLine = async (pred: (l: Record<string, unknown>) => boolean) => {
      for (let i = 0; i < 200 && !lines().some(pred); i++) await new Promise((r) => setTimeout(r, 25));
      return lines().find(pred);
    };
    try {
      expect(await waitLine((l) => l.listening !== undefined)).toEqual({ listening: port });
      const ping = await app.request('POST', `/v1/workspace/webhooks/${hook.id}/test`, {
        token: jwt,
        schema: testWebhookResponse,
      });
      expect(await waitLine((l) => l.accepted === ping.body.deliveryId)).toMatchObject({ event: 'ping' });

      const post = (body: string, signature: string, id = ping.body.deliveryId) =>
        fetch(`http://127.0.0.1:${port}/`, {
          method: 'POST',
          body,
          headers: { 'x-svcenv-signature': signature, 'x-svcenv-delivery': id },
        });
      const sign = (body: string) => `sha256=${createHmac('sha256', hook.secret).update(body).digest('hex')}`;
      const fresh = JSON.stringify({ event: 'ping', timestamp: new Date().toISOString(), keys: [] });
      expect((await post(fresh, sign(`${fresh} `), randomUUID())).status).toBe(401);
      expect((await post(fresh, 'sha256=00', randomUUID())).status).toBe(401);
      const old = JSON.stringify({ event: 'ping', timestamp: new Date(Date.now() - 6 * 60_000).toISOString() });
      expect((await post(old, sign(old), randomUUID())).status).toBe(400);
      expect((await post(fresh, sign(fresh))).status).toBe(200);
      expect((await post(fresh, sign(fresh), randomUUID())).status).toBe(204);
      // The webhooks page and the README (D35) show this very file.
      const example = readFileSync(join(repoRoot, 'docs', 'examples', 'webhook-receiver.mjs'), 'utf8');
      for (const doc of [join('docs', 'webhooks.md'), 'README.md']) {
        const page = readFileSync(join(repoRoot, doc), 'utf8');
        const block = /```js\n([\s\S]*?)```/.exec(page)?.[1];
        expect(block && example.endsWith(block), doc).toBe(true);
      }
    } finally {
      child.kill();
      await app.stop();
    }
  });
});
