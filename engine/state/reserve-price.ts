/**
 * The price of a pool priced by its reserves: token 0 in token 1, from its reserves with decimals
 * applied (x of token 0, y of token 1). A constant-product pool (x*y = k) states their ratio y/x; a
 * Solidly stable pool (x^3*y + x*y^3 = k) states its curve's marginal price at those reserves,
 * -dy/dx = (3x^2*y + y^3) / (x^3 + 3x*y^2), which is 1 when x = y and moves far less than y/x. The
 * shard writer's float price (engine/shards/apply.ts) and the exact price shown
 * (engine/state/exact-price.ts) both come from here.
 */
import { PoolProtocol } from '../events/model.js';

/** Whether pools of this model are priced from their reserves, which their `Sync` states. */
export function pricedByReserves(protocol: number): boolean {
  return protocol === PoolProtocol.ConstantProduct || protocol === PoolProtocol.SolidlyStable;
}

/** Price of token 0 in token 1 from reserves x (token 0) and y (token 1), decimals applied; x > 0. */
export function reservePrice(protocol: number, x: number, y: number): number {
  const r = y / x;
  // Divided through by x^3: (3r + r^3) / (1 + 3r^2), r = y/x, free of overflow at any reserves.
  if (protocol === PoolProtocol.SolidlyStable) return (r * (3 + r * r)) / (1 + 3 * r * r);
  return r;
}

/**
 * The same price as an exact fraction [numerator, denominator] of the raw reserves r0 and r1 (token
 * units) and the tokens' decimals: with X = r0 * 10^d1 and Y = r1 * 10^d0 (both reserves brought to
 * 10^-(d0+d1) units), y/x = Y/X and the stable curve's price is (3X^2*Y + Y^3) / (X^3 + 3X*Y^2).
 */
export function reservePriceFraction(protocol: number, r0: bigint, r1: bigint, d0: number, d1: number): [bigint, bigint] {
  const x = r0 * 10n ** BigInt(d1);
  const y = r1 * 10n ** BigInt(d0);
  if (protocol === PoolProtocol.SolidlyStable) return [y * (3n * x * x + y * y), x * (x * x + 3n * y * y)];
  return [y, x];
}
