/**
 * Injected time source: every time rule (token expiry, JWT lifetime, rate windows) reads this, so tests
 * move a fake clock instead of sleeping (guide convention 11).
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests can move; starts at the real time unless told otherwise. */
export class ManualClock implements Clock {
  private ms: number;
  constructor(start: Date = new Date()) {
    this.ms = start.getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
  set(date: Date): void {
    this.ms = date.getTime();
  }
}

export const iso = (d: Date): string => d.toISOString();
export const DAY_MS = 24 * 60 * 60 * 1000;
