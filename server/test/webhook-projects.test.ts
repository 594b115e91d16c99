/**
 * A webhook limited to one project (`projectId`, an id or a slug, D58) hears only that project's events;
 * webhooks without it, the ones made before the field existed included, hear every project. Changing the
 * limit takes effect at once, also for deliveries already queued; a webhook limited to a project goes with it.
 */
import { operations as ops } from '@svcenv/contract/operations';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';
import { type Received, type Receiver, startReceiver } from './receiver.js';

describe(`webhooks limited to one project (${dialectName})`, () => {
  let app: TestApp;
  let rx: Receiver;
  beforeAll(async () => {
    app = await startApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx.stop();
    await app.stop();
  });

  /** Waits until no delivery job is left, so that "nothing arrived" means nothing was sent. */
  async function settled() {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const open = await app.db.db
        .selectFrom('jobs')
        .select('id')
        .where('status', 'in', ['pending', 'running'])
        .execute();
      if (open.length === 0 || Date.now() > deadline) return expect(open).toEqual([]);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('hears only its project; accepts a slug; null again hears every project', async () => {
    const { jwt } = await signupUser(app);
    const a = await createProject(app, jwt, { envs: ['dev'] });
    const b = await createProject(app, jwt, { envs: ['dev'] });
    const tag = a.id.slice(0, 8);
    const events = ['vars.bulk_upsert'] as const;
    const create = (path: string, projectId?: string | null) =>
      app.call(
        ops.createWebhook,
        {
          body: {
            name: path,
            url: rx.url(`/${path}-${tag}`),
            events: [...events],
            ...(projectId !== undefined ? { projectId } : {}),
          },
        },
        jwt,
      );
    const byId = await create('by-id', a.id);
    expect(byId.status).toBe(201);
    expect(byId.body.projectId).toBe(a.id);
    const bySlug = await create('by-slug', b.slug);
    expect(bySlug.status).toBe(201);
    // The slug is stored as the project's id (a renamed slug changes nothing).
    expect(bySlug.body.projectId).toBe(b.id);
    const all = await create('all');
    expect(all.body.projectId).toBeNull();
    const listed = await app.call(ops.listWebhooks, {}, jwt);
    expect(new Map(listed.body.webhooks.map((w) => [w.id, w.projectId]))).toEqual(
      new Map([
        [byId.body.id, a.id],
        [bySlug.body.id, b.id],
        [all.body.id, null],
      ]),
    );

    const to = (name: string) => (r: Received) => r.path === `/${name}-${tag}`;
    await upsert(app, jwt, a.id, ['dev'], [{ key: 'A', value: '1', type: 'plain' }]);
    await upsert(app, jwt, b.id, ['dev'], [{ key: 'B', value: '1', type: 'plain' }]);
    await rx.waitFor(2, to('all'));
    await settled();
    expect(rx.received.filter(to('by-id')).map((r) => r.body.projectId)).toEqual([a.id]);
    expect(rx.received.filter(to('by-slug')).map((r) => r.body.projectId)).toEqual([b.id]);
    expect(
      rx.received
        .filter(to('all'))
        .map((r) => r.body.projectId)
        .sort(),
    ).toEqual([a.id, b.id].sort());

    // Widened to every project (null), then narrowed by slug to the other one.
    const widened = await app.call(ops.updateWebhook, { params: { id: byId.body.id }, body: { projectId: null } }, jwt);
    expect(widened.status).toBe(200);
    expect(widened.body.projectId).toBeNull();
    await upsert(app, jwt, b.id, ['dev'], [{ key: 'B', value: '2', type: 'plain' }]);
    await rx.waitFor(2, to('by-id'));
    const narrowed = await app.call(
      ops.updateWebhook,
      { params: { id: bySlug.body.id }, body: { projectId: a.slug } },
      jwt,
    );
    expect(narrowed.body.projectId).toBe(a.id);
    await upsert(app, jwt, b.id, ['dev'], [{ key: 'B', value: '3', type: 'plain' }]);
    await rx.waitFor(4, to('all'));
    await settled();
    // Its two events of b came before it was narrowed to a; b's third did not reach it.
    expect(rx.received.filter(to('by-slug')).map((r) => r.body.projectId)).toEqual([b.id, b.id]);
    expect(rx.received.filter(to('by-id')).map((r) => r.body.projectId)).toEqual([a.id, b.id, b.id]);
  });

  it('refuses a project that is not in the workspace with 400 naming projectId', async () => {
    const { jwt } = await signupUser(app);
    const other = await signupUser(app);
    const theirs = await createProject(app, other.jwt);
    const body = { name: 'x', url: rx.url('/refused'), events: ['vars.pull' as const] };
    for (const projectId of [theirs.id, theirs.slug, 'no-such-project', '00000000-0000-4000-8000-000000000000']) {
      const res = await app.call(ops.createWebhook, { body: { ...body, projectId } }, jwt);
      expect(res.status, projectId).toBe(400);
      expect(res.error).toMatchObject({ code: 'VALIDATION', field: 'projectId' });
    }
    const bad = await app.call(ops.createWebhook, { body: { ...body, projectId: 'Not A Slug!' } }, jwt);
    expect(bad.status).toBe(400);
    expect(bad.error).toMatchObject({ code: 'VALIDATION', field: 'projectId' });
  });

  it('drops a queued delivery once the webhook is limited to another project; goes with its project', async () => {
    const { jwt } = await signupUser(app);
    const a = await createProject(app, jwt, { envs: ['dev'] });
    const b = await createProject(app, jwt, { envs: ['dev'] });
    const tag = a.id.slice(0, 8);
    const hook = await app.call(
      ops.createWebhook,
      { body: { name: 'q', url: rx.url(`/queued-${tag}`), events: ['vars.bulk_upsert'], projectId: a.id } },
      jwt,
    );
    expect(hook.status).toBe(201);
    const to = (r: Received) => r.path === `/queued-${tag}`;
    // The first event loads this process's subscription cache (kept up to 5 s, jobs/events.ts).
    await upsert(app, jwt, a.id, ['dev'], [{ key: 'A', value: '1', type: 'plain' }]);
    await rx.waitFor(1, to);
    // Limited to b behind the cache's back (as another instance would): the cache still enqueues a's next
    // event, and the delivery job, which reads the webhook as it is now, drops it.
    await app.db.db.updateTable('webhooks').set({ project_id: b.id }).where('id', '=', hook.body.id).execute();
    await upsert(app, jwt, a.id, ['dev'], [{ key: 'A', value: '2', type: 'plain' }]);
    await settled();
    expect(rx.received.filter(to)).toHaveLength(1);

    const del = await app.call(ops.deleteProject, { params: { id: b.id } }, jwt);
    expect(del.status).toBe(204);
    const left = await app.call(ops.listWebhooks, {}, jwt);
    expect(left.body.webhooks.map((w) => w.id)).not.toContain(hook.body.id);
  });
});
