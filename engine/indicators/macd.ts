import { ema } from './ema.js';

export interface MacdReturnType {
  /** EMA(fast) - EMA(slow). */
  readonly macd: Float64Array;
  /** EMA(signal) of macd, seeded at the first `signal` defined macd values. */
  readonly signal: Float64Array;
  /** macd - signal. */
  readonly histogram: Float64Array;
}

/** Moving average convergence/divergence; NaN wherever an input average is not yet defined. */
export function macd(x: Float64Array, fast: number, slow: number, signal: number): MacdReturnType {
  const f = ema(x, fast);
  const s = ema(x, slow);
  const line = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) line[i] = f[i]! - s[i]!;
  const sig = ema(line, signal);
  const histogram = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) histogram[i] = line[i]! - sig[i]!;
  return { macd: line, signal: sig, histogram };
}
