import { describe, expect, it } from 'vitest';
import { sma } from './sma.js';

describe('sma', () => {
  it('averages each full window and leaves NaN before the first', () => {
    expect(Array.from(sma(Float64Array.from([1, 2, 3, 4, 10]), 3))).toEqual([NaN, NaN, 2, 3, 17 / 3]);
  });

  it('is all NaN when the series is shorter than the period', () => {
    expect(Array.from(sma(Float64Array.from([1, 2]), 3))).toEqual([NaN, NaN]);
  });
});
