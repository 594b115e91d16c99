import { endpoints } from '@svcenv/contract';
import { sql } from 'kysely';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '../db/index.js';

/**
 * D52: Prometheus metrics, one registry per server (tests run several in one process). No label ever
 * carries a value, a key name or a token: routes are labelled by their template (`/v1/projects/:id/...`),
 * statuses by number, jobs by kind, webhook deliveries by outcome.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'svcenv_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'svcenv_http_request_duration_seconds',
    help: 'Time to answer, by route template and method',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  private readonly pulls = new Counter({
    name: 'svcenv_pulls_total',
    help: 'Pulls answered, by status (200 with a body, 304 not modified, or a refusal)',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  private readonly failedLogins = new Counter({
    name: 'svcenv_failed_logins_total',
    help: 'Logins refused (wrong email, password or two-factor code)',
    registers: [this.registry],
  });
  private readonly rateLimited = new Counter({
    name: 'svcenv_rate_limited_total',
    help: 'Requests refused with 429, by route template',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  private readonly auditCommit = new Histogram({
    name: 'svcenv_audit_commit_seconds',
    help: 'Time of one group commit of audit rows (pull, export, reveal)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });

  constructor(db: Db) {
    collectDefaultMetrics({ register: this.registry, prefix: 'svcenv_' });
    // Read from the database at scrape time: the state of the queue and of deliveries as every instance
    // sees it, without counting in the hot path.
    new Gauge({
      name: 'svcenv_jobs',
      help: 'Durable jobs, by kind and state',
      labelNames: ['kind', 'state'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        const rows = await db
          .selectFrom('jobs')
          .select(['kind', 'status', (eb) => eb.fn.countAll<number>().as('n')])
          .groupBy(['kind', 'status'])
          .execute();
        for (const r of rows) this.set({ kind: r.kind, state: r.status }, Number(r.n));
      },
    });
    new Gauge({
      name: 'svcenv_webhook_deliveries',
      help: 'Webhook delivery attempts kept (the last days), by outcome',
      labelNames: ['outcome'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        const rows = await db
          .selectFrom('webhook_deliveries')
          .select([
            sql<string>`case when status between 200 and 299 then 'success' when status = 0 then 'no_response' else 'error_status' end`.as(
              'outcome',
            ),
            (eb) => eb.fn.countAll<number>().as('n'),
          ])
          .groupBy('outcome')
          .execute();
        for (const r of rows) this.set({ outcome: r.outcome }, Number(r.n));
      },
    });
  }

  /** D43/D52: the number of pulls held (long-poll) now, read at scrape time. */
  trackHeldPulls(count: () => number): void {
    new Gauge({
      name: 'svcenv_longpolls_held',
      help: 'Pulls held waiting for their environment to change (D43)',
      registers: [this.registry],
      collect() {
        this.set(count());
      },
    });
  }

  /** One answered request (http/hooks.ts onResponse). `route` is the matched template, or undefined. */
  observe(route: string | undefined, method: string, status: number, seconds: number): void {
    const r = route ?? 'unmatched';
    this.requests.inc({ route: r, method, status: String(status) });
    this.latency.observe({ route: r, method }, seconds);
    if (r === endpoints.pull.path) this.pulls.inc({ status: String(status) });
    if (status === 401 && method === 'POST' && (r === endpoints.login.path || r === endpoints.verifyMfa.path)) {
      this.failedLogins.inc();
    }
    if (status === 429) this.rateLimited.inc({ route: r });
  }

  /** Wraps the audit writer so each group commit is timed. */
  timeAuditCommits<A extends unknown[]>(insert: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
    return async (...args) => {
      const end = this.auditCommit.startTimer();
      try {
        await insert(...args);
      } finally {
        end();
      }
    };
  }
}
