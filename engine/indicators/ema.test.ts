import { describe, expect, it } from 'vitest';
import { ema } from './ema.js';

describe('ema', () => {
  it('is seeded with the SMA of the first period, then smoothed with 2/(period+1)', () => {
    // seed (2+4+6)/3 = 4; then 0.5·8 + 0.5·4 = 6; then 0.5·4 + 0.5·6 = 5
    expect(Array.from(ema(Float64Array.from([2, 4, 6, 8, 4]), 3))).toEqual([NaN, NaN, 4, 6, 5]);
  });

  it('skips leading NaNs before seeding', () => {
    expect(Array.from(ema(Float64Array.from([NaN, 2, 4, 6, 8]), 3))).toEqual([NaN, NaN, NaN, 4, 6]);
  });

  it('is all NaN when the series is shorter than the period', () => {
    expect(Array.from(ema(Float64Array.from([1, 2]), 3))).toEqual([NaN, NaN]);
  });
});
