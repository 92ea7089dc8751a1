import { describe, expect, it } from 'vitest';
import { macd } from './macd.js';

describe('macd', () => {
  it('is EMA(fast) - EMA(slow), with the signal an EMA of it seeded where it is defined', () => {
    // EMA2 = [NaN, 3, 5, 7, 5]; EMA3 = [NaN, NaN, 4, 6, 5]; macd = [NaN, NaN, 1, 1, 0]
    // signal EMA2 of macd: seed (1+1)/2 = 1 at i=3, then 2/3·0 + 1/3·1 = 1/3
    const r = macd(Float64Array.from([2, 4, 6, 8, 4]), 2, 3, 2);
    const close = (a: Float64Array, b: number[]) => b.forEach((v, i) => (Number.isNaN(v) ? expect(a[i]).toBeNaN() : expect(a[i]).toBeCloseTo(v, 12)));
    close(r.macd, [NaN, NaN, 1, 1, 0]);
    close(r.signal, [NaN, NaN, NaN, 1, 1 / 3]);
    close(r.histogram, [NaN, NaN, NaN, 0, -1 / 3]);
  });
});
