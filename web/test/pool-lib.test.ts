/** lib/pool.ts: mapLimit keeps at most `limit` calls in flight, starts the next as one ends, keeps the order. */
import { describe, expect, it } from 'vitest';
import { mapLimit } from '../src/lib/pool.js';

describe('mapLimit', () => {
  it('runs at most `limit` at once, refills as each ends, and answers in the items order', async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const out = await mapLimit([30, 5, 20, 1, 10, 2, 8, 4, 15], 3, async (ms) => {
      started.push(ms);
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, ms));
      inFlight--;
      return ms * 2;
    });
    expect(most).toBe(3);
    expect(out).toEqual([60, 10, 40, 2, 20, 4, 16, 8, 30]);
    expect(started).toHaveLength(9);
  });

  it('fewer items than the limit, none, and a rejection', async () => {
    expect(await mapLimit([1, 2], 6, async (n) => n + 1)).toEqual([2, 3]);
    expect(await mapLimit([], 6, async (n: number) => n)).toEqual([]);
    await expect(
      mapLimit([1, 2, 3], 2, async (n) => {
        if (n === 2) throw new Error('no');
        return n;
      }),
    ).rejects.toThrow('no');
  });
});
