/**
 * The price of a pool priced by its reserves: token 0 in token 1, from its reserves with decimals
 * applied (x of token 0, y of token 1). A constant-product pool (x*y = k) states their ratio y/x; a
 * Solidly stable pool (x^3*y + x*y^3 = k) states its curve's marginal price at those reserves,
 * -dy/dx = (3x^2*y + y^3) / (x^3 + 3x*y^2), which is 1 when x = y and moves far less than y/x. A
 * weighted pool (Balancer v2, invariant prod B_i^w_i) states its spot price without fees,
 * (y/w1) / (x/w0), from its first two tokens' balances and their normalised weights. The
 * shard writer's float price (engine/shards/apply.ts) and the exact price shown
 * (engine/state/exact-price.ts) both come from here.
 */
import { PoolProtocol } from '../events/model.js';
import type { EngineViews } from './views.js';

/** Whether pools of this model are priced from their reserves (their `Sync`, or the amounts their events move). */
export function pricedByReserves(protocol: number): boolean {
  return protocol === PoolProtocol.ConstantProduct || protocol === PoolProtocol.SolidlyStable || protocol === PoolProtocol.Weighted;
}

const W32 = 4_294_967_296;

/** Weighted pool p's normalised weight of token `side` (1e18 = 100 %), 0n for other pools. */
export function poolWeight(v: EngineViews, p: number, side: 0 | 1): bigint {
  const at = p * 4 + side * 2;
  return (BigInt(v.poolWeights[at + 1]!) << 32n) | BigInt(v.poolWeights[at]!);
}

export function setPoolWeight(v: EngineViews, p: number, side: 0 | 1, w: bigint): void {
  const at = p * 4 + side * 2;
  v.poolWeights[at] = Number(w & 0xffffffffn);
  v.poolWeights[at + 1] = Number(w >> 32n);
}

/** w0 / w1 of pool p: 1 for pools without weights. */
export function weightRatio(v: EngineViews, p: number): number {
  const at = p * 4;
  const w1 = v.poolWeights[at + 3]! * W32 + v.poolWeights[at + 2]!;
  return w1 > 0 ? (v.poolWeights[at + 1]! * W32 + v.poolWeights[at]!) / w1 : 1;
}

/**
 * Price of token 0 in token 1 from reserves x (token 0) and y (token 1), decimals applied; x > 0.
 * `weights` is w0 / w1 (weighted pools only).
 */
export function reservePrice(protocol: number, x: number, y: number, weights = 1): number {
  const r = y / x;
  // Divided through by x^3: (3r + r^3) / (1 + 3r^2), r = y/x, free of overflow at any reserves.
  if (protocol === PoolProtocol.SolidlyStable) return (r * (3 + r * r)) / (1 + 3 * r * r);
  if (protocol === PoolProtocol.Weighted) return r * weights;
  return r;
}

/**
 * The same price as an exact fraction [numerator, denominator] of the raw reserves r0 and r1 (token
 * units) and the tokens' decimals: with X = r0 * 10^d1 and Y = r1 * 10^d0 (both reserves brought to
 * 10^-(d0+d1) units), y/x = Y/X, the stable curve's price is (3X^2*Y + Y^3) / (X^3 + 3X*Y^2) and a
 * weighted pool's (Y*w0) / (X*w1).
 */
export function reservePriceFraction(protocol: number, r0: bigint, r1: bigint, d0: number, d1: number, w0 = 1n, w1 = 1n): [bigint, bigint] {
  const x = r0 * 10n ** BigInt(d1);
  const y = r1 * 10n ** BigInt(d0);
  if (protocol === PoolProtocol.SolidlyStable) return [y * (3n * x * x + y * y), x * (x * x + 3n * y * y)];
  if (protocol === PoolProtocol.Weighted) return [y * w0, x * w1];
  return [y, x];
}
