import { describe, expect, it } from 'vitest';
import { toggled } from '../src/lib/sets.js';

describe('toggled', () => {
  it('adds a missing item and removes a present one, leaving the original set alone', () => {
    const start = new Set(['A']);
    expect([...toggled(start, 'B')]).toEqual(['A', 'B']);
    expect([...toggled(start, 'A')]).toEqual([]);
    expect([...start]).toEqual(['A']);
  });
});
