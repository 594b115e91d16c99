import { sessionResponse, updateVarResponse } from '@svcenv/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DbHandle, migrate, openDb } from '../src/db/index.js';
import { scanExpiringVariables } from '../src/jobs/expiry-reminders.js';
import { DAY_MS, ManualClock } from '../src/lib/clock.js';
import { createProject, dialectName, signupUser, startApp, type TestApp, upsert } from './harness.js';
import { startSmtpCapture } from './smtp.js';

const HOUR = 3_600_000;
const SUBJECT = /expiring soon/;

describe(`expiry reminders (${dialectName}, D37)`, () => {
  let app: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpCapture>>;
  /** A second instance's connection pool (PostgreSQL, D2); on SQLite, one process holds the database. */
  let second: DbHandle | null = null;
  const clock = new ManualClock(new Date('2026-12-01T08:00:00.000Z'));
  beforeAll(async () => {
    smtp = await startSmtpCapture();
    app = await startApp({ clock, env: { SMTP_URL: smtp.url } });
    // The test moves the clock and runs the runner by hand.
    await app.deps.jobs.stop();
    if (app.db.dialect === 'postgres') {
      second = openDb({ dataDir: app.dataDir, databaseUrl: app.deps.config.DATABASE_URL });
      await migrate(second);
    }
  });
  afterAll(async () => {
    await second?.close();
    await app.stop();
    await smtp.stop();
  });

  async function join(ownerJwt: string, name: string, role: 'Owner' | 'Member') {
    const session = await app.request('GET', '/v1/auth/session', { token: ownerJwt, schema: sessionResponse });
    const u = await signupUser(app, name);
    await app.db.db
      .insertInto('workspace_members')
      .values({
        workspace_id: session.body.user.workspaceId,
        user_id: u.user.id,
        ws_role: role,
        joined_at: '2026-01-01T00:00:00.000Z',
      })
      .execute();
    return u;
  }

  it('emails every Owner the expiring and expired keys, never values, at most once per 24 hours per workspace', async () => {
    const owner = await signupUser(app, 'Olga');
    const coOwner = await join(owner.jwt, 'Omar', 'Owner');
    const member = await join(owner.jwt, 'Mel', 'Member');
    const p = await createProject(app, owner.jwt, { name: 'Billing API' });
    const VALUE = 'VALUE_CANARY_91ab';
    await upsert(
      app,
      owner.jwt,
      p.id,
      ['dev', 'prod'],
      ['SOON', 'PAST', 'LATER', 'NEVER'].map((key) => ({ key, value: `${VALUE}-${key}`, type: 'secret' })),
    );
    const setExpiry = async (env: string, key: string, at: number) => {
      const res = await app.request('PUT', `/v1/projects/${p.id}/envs/${env}/vars/${key}`, {
        token: owner.jwt,
        body: { expiresAt: new Date(at).toISOString() },
        schema: updateVarResponse,
      });
      expect(res.status).toBe(200);
    };
    const t0 = clock.now().getTime();
    await setExpiry('prod', 'SOON', t0 + 3 * DAY_MS);
    await setExpiry('dev', 'PAST', t0 - DAY_MS);
    await setExpiry('dev', 'LATER', t0 + 8 * DAY_MS);
    // A workspace with nothing expiring gets nothing.
    const quiet = await signupUser(app, 'Quinn');
    const q = await createProject(app, quiet.jwt);
    await upsert(app, quiet.jwt, q.id, ['dev'], [{ key: 'X', value: 'x', type: 'plain' }]);

    const reminders = () => smtp.mails.filter((m) => SUBJECT.test(m.subject));
    await app.deps.jobs.runDue();
    const first = await Promise.all([owner, coOwner].map((u) => smtp.waitFor(u.email, (m) => SUBJECT.test(m.subject))));
    expect(reminders()).toHaveLength(2);
    for (const mail of first) {
      expect(mail.subject).toBe(`svcenv: 2 variables expiring soon in Olga's workspace`);
      expect(mail.text).toContain('Billing API / prod / SOON');
      expect(mail.text).toContain('Billing API / dev / PAST  (expired 2026-11-30T08:00:00.000Z)');
      expect(mail.text).not.toContain('LATER');
      expect(mail.text).not.toContain('NEVER');
      expect(mail.raw).not.toContain(VALUE);
    }
    expect(reminders().some((m) => m.to.includes(member.email) || m.to.includes(quiet.email))).toBe(false);

    // Within 24 hours: nothing more, however often the scheduled scan runs.
    for (const step of [0, HOUR, 6 * HOUR, 16 * HOUR]) {
      clock.advance(step);
      await app.deps.jobs.runDue();
    }
    expect(reminders()).toHaveLength(2);
    // The boundary itself, scanning directly (the runner scans every 15 minutes).
    const deps = (db: DbHandle) => ({ db: db.db, clock, jobs: app.deps.jobs, publicUrl: 'http://svcenv.test' });
    clock.set(new Date(t0 + DAY_MS - 1));
    expect(await scanExpiringVariables(deps(app.db))).toBe(0);
    clock.set(new Date(t0 + DAY_MS));
    expect(await scanExpiringVariables(deps(app.db))).toBe(1);
    await app.deps.jobs.runDue();
    // The next one also lists LATER, now 7 days away.
    expect(reminders()).toHaveLength(4);
    const again = reminders().filter((m) => m.to.includes(owner.email));
    expect(again).toHaveLength(2);
    expect(again[1]!.subject).toBe(`svcenv: 3 variables expiring soon in Olga's workspace`);
    expect(again[1]!.text).toContain('Billing API / dev / LATER');

    // Two instances scanning at the same moment: one claims the workspace, the other sends nothing.
    clock.set(new Date(t0 + 2 * DAY_MS));
    const claimed = await Promise.all([
      scanExpiringVariables(deps(app.db)),
      scanExpiringVariables(deps(second ?? app.db)),
    ]);
    expect(claimed.reduce((a, b) => a + b, 0)).toBe(1);
    await app.deps.jobs.runDue();
    expect(reminders()).toHaveLength(6);

    // And the runner's own schedule picks the next day up by itself.
    clock.set(new Date(t0 + 3 * DAY_MS));
    await app.deps.jobs.runDue();
    expect(reminders()).toHaveLength(8);

    // Once the variables are gone or their expiry cleared, no reminder is due.
    await app.request('PUT', `/v1/projects/${p.id}/envs/prod/vars/SOON`, {
      token: owner.jwt,
      body: { clearExpiry: true },
    });
    await app.request('POST', `/v1/projects/${p.id}/envs/dev/vars:bulkDelete`, {
      token: owner.jwt,
      body: { keys: ['PAST', 'LATER'] },
    });
    clock.set(new Date(t0 + 5 * DAY_MS));
    await app.deps.jobs.runDue();
    expect(reminders()).toHaveLength(8);
  });
});
