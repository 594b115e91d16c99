import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { Redis } from 'ioredis';
import type { Clock } from './clock.js';

/**
 * Sliding-window rate limits (spec "Limits", D14, D11), counted in memory or, with REDIS_URL, in Redis so
 * that every instance shares the counts (D2).
 *
 * Why not @fastify/rate-limit or rate-limiter-flexible: both take time from Date.now() or from Redis key
 * TTLs, so their windows cannot follow the injected clock that every other time rule uses (guide
 * convention 11), and neither counts only *failed* attempts (the per-account rule). The algorithm is small:
 * a sorted set of hit times per key, pruned to the window; Redis runs it as one Lua script (atomic across
 * instances), with time passed in from the injected clock. ioredis is the maintained part we rely on.
 * docs/decisions/0003-account-security.md has the reasoning.
 */
export interface LimitRule {
  /** Part of the key, so two rules never share counts. */
  name: string;
  max: number;
  windowMs: number;
}

export interface LimitResult {
  allowed: boolean;
  /** When refused: how long until the oldest counted hit leaves the window. */
  retryAfterMs: number;
}

interface LimitStore {
  /** Prunes hits older than the window; when `record` and under the limit, records one at `nowMs`. */
  take(key: string, nowMs: number, rule: LimitRule, record: boolean): Promise<LimitResult>;
  close(): Promise<void>;
}

const LONGEST_WINDOW_MS = 3_600_000;

export class MemoryLimitStore implements LimitStore {
  private readonly hits = new Map<string, number[]>();
  constructor(private readonly maxKeys = 50_000) {}

  async take(key: string, nowMs: number, rule: LimitRule, record: boolean): Promise<LimitResult> {
    const list = prune(this.hits.get(key) ?? [], nowMs, rule.windowMs);
    if (list.length < rule.max) {
      if (record) list.push(nowMs);
      if (list.length > 0) this.set(key, list, nowMs);
      else this.hits.delete(key);
      return { allowed: true, retryAfterMs: 0 };
    }
    this.hits.set(key, list);
    return { allowed: false, retryAfterMs: list[0]! + rule.windowMs - nowMs };
  }

  private set(key: string, list: number[], nowMs: number): void {
    // Bounded: when full, first drop keys whose hits are all older than the longest window (an hour).
    if (!this.hits.has(key) && this.hits.size >= this.maxKeys) {
      for (const [k, v] of this.hits) if (v.at(-1)! <= nowMs - LONGEST_WINDOW_MS) this.hits.delete(k);
      if (this.hits.size >= this.maxKeys) this.hits.delete(this.hits.keys().next().value as string);
    }
    this.hits.set(key, list);
  }

  async close(): Promise<void> {}
}

function prune(list: number[], nowMs: number, windowMs: number): number[] {
  let i = 0;
  while (i < list.length && list[i]! <= nowMs - windowMs) i++;
  return i === 0 ? list : list.slice(i);
}

/** The same algorithm as MemoryLimitStore, atomically in Redis. */
const TAKE_LUA = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count < max then
  if ARGV[4] == '1' then
    redis.call('ZADD', key, now, ARGV[5])
    redis.call('PEXPIRE', key, window)
  end
  return {1, 0}
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return {0, tonumber(oldest[2]) + window - now}
`;

type RedisWithTake = Redis & {
  svcenvTake(
    key: string,
    now: number,
    window: number,
    max: number,
    record: string,
    member: string,
  ): Promise<[number, number]>;
};

export class RedisLimitStore implements LimitStore {
  private readonly redis: RedisWithTake;
  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    // While disconnected a command fails at once instead of waiting for a reconnect, so a Redis outage costs
    // a login nothing and the limiter counts in memory meanwhile (see RateLimiter); ioredis keeps
    // reconnecting in the background.
    const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000 });
    redis.defineCommand('svcenvTake', { numberOfKeys: 1, lua: TAKE_LUA });
    this.redis = redis as RedisWithTake;
  }

  /** Resolves once connected, or after `timeoutMs` (then the limiter counts in memory until Redis is back). */
  ready(timeoutMs: number): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.redis.once('ready', done);
    });
  }

  onError(listener: (e: Error) => void): void {
    this.redis.on('error', listener);
  }

  async take(key: string, nowMs: number, rule: LimitRule, record: boolean): Promise<LimitResult> {
    // The member must be unique per hit: two hits in the same millisecond are two hits.
    const member = `${nowMs}:${randomBytes(6).toString('hex')}`;
    const [ok, retry] = await this.redis.svcenvTake(
      this.prefix + key,
      nowMs,
      rule.windowMs,
      rule.max,
      record ? '1' : '0',
      member,
    );
    return { allowed: ok === 1, retryAfterMs: Number(retry) };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

export class RateLimiter {
  private readonly memory = new MemoryLimitStore();
  private lastWarn = 0;

  constructor(
    private readonly clock: Clock,
    private readonly shared: RedisLimitStore | null,
    private readonly log: { warn(obj: object, msg: string): void },
  ) {
    shared?.onError((e) => this.warn(e));
  }

  /** Start-up: gives a configured Redis a moment to connect, so the first requests are already shared. */
  async ready(timeoutMs = 3_000): Promise<void> {
    await this.shared?.ready(timeoutMs);
  }

  /** Records a hit if under the limit; `allowed: false` when the limit is already reached. */
  consume(key: string, rule: LimitRule): Promise<LimitResult> {
    return this.take(key, rule, true);
  }

  /** Whether a hit would be allowed now, recording nothing. */
  peek(key: string, rule: LimitRule): Promise<LimitResult> {
    return this.take(key, rule, false);
  }

  private async take(key: string, rule: LimitRule, record: boolean): Promise<LimitResult> {
    const fullKey = `${rule.name}:${key}`;
    const now = this.clock.now().getTime();
    if (this.shared) {
      try {
        return await this.shared.take(fullKey, now, rule, record);
      } catch (e) {
        // Redis down: keep limiting, per instance, rather than failing logins or letting them through.
        this.warn(e as Error);
      }
    }
    return this.memory.take(fullKey, now, rule, record);
  }

  private warn(e: Error): void {
    const now = Date.now();
    if (now - this.lastWarn < 60_000) return;
    this.lastWarn = now;
    this.log.warn({ err: { message: e.message } }, 'rate-limit store (Redis) unavailable; counting in memory');
  }

  async close(): Promise<void> {
    await this.shared?.close();
  }
}

/**
 * The address a per-IP limit counts: IPv4 as is (IPv4-mapped IPv6 unwrapped), IPv6 by its /64 prefix,
 * since one client normally holds a whole /64 and could otherwise rotate addresses within it.
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIP(ip) !== 6) return ip;
  const [head = '', tail] = ip.toLowerCase().split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return `${groups
    .slice(0, 4)
    .map((g) => g.padStart(4, '0'))
    .join(':')}::/64`;
}
