import { sma } from './sma.js';

export interface BbandsReturnType {
  readonly upper: Float64Array;
  /** SMA(period). */
  readonly middle: Float64Array;
  readonly lower: Float64Array;
}

/** Bollinger bands: SMA(period) ± k · population standard deviation of the same window. */
export function bbands(x: Float64Array, period: number, k: number): BbandsReturnType {
  const middle = sma(x, period);
  const upper = new Float64Array(x.length).fill(NaN);
  const lower = new Float64Array(x.length).fill(NaN);
  for (let i = period - 1; i < x.length; i++) {
    const m = middle[i]!;
    let ss = 0;
    for (let j = i - period + 1; j <= i; j++) ss += (x[j]! - m) ** 2;
    const sd = Math.sqrt(ss / period);
    upper[i] = m + k * sd;
    lower[i] = m - k * sd;
  }
  return { upper, middle, lower };
}
