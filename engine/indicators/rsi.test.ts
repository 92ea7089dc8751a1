import { describe, expect, it } from 'vitest';
import { rsi } from './rsi.js';

describe('rsi', () => {
  it("uses the plain mean of the first period's changes, then Wilder smoothing", () => {
    // changes 1, -1, 2, 0. i=2: gain 0.5, loss 0.5 -> 50.
    // i=3: gain (0.5 + 2)/2 = 1.25, loss (0.5 + 0)/2 = 0.25 -> RS 5 -> 100 - 100/6.
    // i=4: gain 0.625, loss 0.125 -> RS 5 again.
    const out = Array.from(rsi(Float64Array.from([1, 2, 1, 3, 3]), 2));
    expect(out.slice(0, 2)).toEqual([NaN, NaN]);
    expect(out[2]).toBeCloseTo(50, 12);
    expect(out[3]).toBeCloseTo(100 - 100 / 6, 12);
    expect(out[4]).toBeCloseTo(100 - 100 / 6, 12);
  });

  it('is 100 with only gains and NaN (not a made-up number) with no change at all', () => {
    expect(Array.from(rsi(Float64Array.from([1, 2, 3]), 2))).toEqual([NaN, NaN, 100]);
    expect(Array.from(rsi(Float64Array.from([1, 1, 1]), 2))).toEqual([NaN, NaN, NaN]);
  });

  it('is all NaN without period + 1 values', () => {
    expect(Array.from(rsi(Float64Array.from([1, 2]), 2))).toEqual([NaN, NaN]);
  });
});
