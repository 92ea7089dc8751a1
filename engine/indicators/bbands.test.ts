import { describe, expect, it } from 'vitest';
import { bbands } from './bbands.js';

describe('bbands', () => {
  it('is SMA ± k · population standard deviation', () => {
    const r = bbands(Float64Array.from([2, 4, 6, 8, 5]), 3, 2);
    expect(Array.from(r.middle.subarray(0, 2))).toEqual([NaN, NaN]);
    expect(r.upper[1]).toBeNaN();
    // [2,4,6]: mean 4, squared deviations 4+0+4 -> variance 8/3
    expect(r.middle[2]).toBeCloseTo(4, 12);
    expect(r.upper[2]).toBeCloseTo(4 + 2 * Math.sqrt(8 / 3), 12);
    expect(r.lower[2]).toBeCloseTo(4 - 2 * Math.sqrt(8 / 3), 12);
    // [6,8,5]: mean 19/3, squared deviations 1/9 + 25/9 + 16/9 -> variance 14/9
    expect(r.middle[4]).toBeCloseTo(19 / 3, 12);
    expect(r.upper[4]).toBeCloseTo(19 / 3 + (2 * Math.sqrt(14)) / 3, 12);
    expect(r.lower[4]).toBeCloseTo(19 / 3 - (2 * Math.sqrt(14)) / 3, 12);
  });
});
