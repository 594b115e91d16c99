import { MASK } from '@svcenv/contract/constants';
import { describe, expect, it } from 'vitest';
import { DOTS, displayValue, isMasked } from '../src/lib/mask.js';

describe('masked values', () => {
  it("shows the contract's mask as dots and every other value as it is, the empty one included", () => {
    expect(isMasked(MASK)).toBe(true);
    expect(displayValue(MASK)).toBe(DOTS);
    expect(displayValue('s3cr3t')).toBe('s3cr3t');
    expect(isMasked('')).toBe(false);
    expect(displayValue('')).toBe('');
  });
});
