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
import { WEIGHTED_POOL_SLOTS, type EngineViews } from './views.js';

/** Whether pools of this model are priced from their reserves (their `Sync`, or the amounts their events move). */
export function pricedByReserves(protocol: number): boolean {
  return protocol === PoolProtocol.ConstantProduct || protocol === PoolProtocol.SolidlyStable || protocol === PoolProtocol.Weighted;
}

const W32 = 4_294_967_296;

const SLOT_MASK = WEIGHTED_POOL_SLOTS - 1;
/** Fibonacci hashing: the top log2(slots) bits of p * 2^32 / golden ratio. */
const HASH_SHIFT = 32 - Math.log2(WEIGHTED_POOL_SLOTS);
const homeSlot = (p: number) => Math.imul(p, 0x9e3779b1) >>> HASH_SHIFT;

/** Slot of pool p in the weighted pools' side table (views.ts weightedPool), or -1 when p has none. */
function weightSlot(v: EngineViews, p: number): number {
  const keys = v.weightedPool;
  for (let s = homeSlot(p), n = 0; n < WEIGHTED_POOL_SLOTS; s = (s + 1) & SLOT_MASK, n++) {
    const key = Atomics.load(keys, s);
    if (key === p + 1) return s;
    if (key === 0) return -1;
  }
  return -1;
}

/** Weighted pool p's normalised weight of token `side` (1e18 = 100 %), 0n for other pools. */
export function poolWeight(v: EngineViews, p: number, side: 0 | 1): bigint {
  const s = weightSlot(v, p);
  if (s < 0) return 0n;
  const at = s * 4 + side * 2;
  return (BigInt(v.weightedWeights[at + 1]!) << 32n) | BigInt(v.weightedWeights[at]!);
}

/**
 * Sets weighted pool p's weights (ingest, before the pool's first event is dispatched): the weights
 * are written before the slot's key, so readers on other threads never see a key without them.
 */
export function setPoolWeights(v: EngineViews, p: number, w0: bigint, w1: bigint): void {
  let s = weightSlot(v, p);
  const fresh = s < 0;
  if (fresh) {
    s = homeSlot(p);
    for (let n = 0; v.weightedPool[s] !== 0; s = (s + 1) & SLOT_MASK) {
      if (++n === WEIGHTED_POOL_SLOTS) throw new Error(`the weighted pools' table is full (${WEIGHTED_POOL_SLOTS} weighted pools): pool ${p} cannot be added`);
    }
  }
  const at = s * 4;
  const words = v.weightedWeights;
  words[at] = Number(w0 & 0xffffffffn);
  words[at + 1] = Number(w0 >> 32n);
  words[at + 2] = Number(w1 & 0xffffffffn);
  words[at + 3] = Number(w1 >> 32n);
  if (fresh) Atomics.store(v.weightedPool, s, p + 1);
}

/** w0 / w1 of pool p: 1 for pools without weights (only weighted pools look in the side table). */
export function weightRatio(v: EngineViews, p: number): number {
  if (v.poolProtocol[p] !== PoolProtocol.Weighted) return 1;
  const s = weightSlot(v, p);
  if (s < 0) return 1;
  const words = v.weightedWeights;
  const at = s * 4;
  const w1 = words[at + 3]! * W32 + words[at + 2]!;
  return w1 > 0 ? (words[at + 1]! * W32 + words[at]!) / w1 : 1;
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

/** 10^i for the decimals a token may have (the writer's table: an f64 holds them up to 10^77 exactly enough). */
const POW10: readonly number[] = Array.from({ length: 78 }, (_, i) => 10 ** i);
const W64 = 18_446_744_073_709_551_616; // 2^64
const W96 = 79_228_162_514_264_337_593_543_950_336; // 2^96

/**
 * Pool p's reserve of token `side` (0 or 1) with its decimals applied: its raw u128 words summed as
 * a number (as shards/u128.ts u128ToNumberInto sums them) over 10^decimals. Derived on every read
 * from the raw words rather than kept beside them in the row: the same operations, so the same digits.
 */
export function poolReserve(v: EngineViews, p: number, side: 0 | 1): number {
  reserveInto(v, p, side, scratch, 0);
  return scratch[0]!;
}

/** poolReserve into out[i] (the writer's form: a number returned from a call that is not inlined is boxed). */
export function reserveInto(v: EngineViews, p: number, side: 0 | 1, out: Float64Array, i: number): void {
  const raw = v.reserveRaw;
  const at = p * 8 + side * 4;
  out[i] = raw[at]! + raw[at + 1]! * W32 + raw[at + 2]! * W64 + raw[at + 3]! * W96;
  out[i] = out[i]! / POW10[side === 0 ? v.poolDecimals0[p]! : v.poolDecimals1[p]!]!;
}

const scratch = new Float64Array(2);

/**
 * Pool p's ratio (token 0 in token 1) from its reserves, where its protocol prices by them and it
 * holds token 0. Writes the view rather than returning the price: the writer calls this per event,
 * and a number returned from a call that is not inlined is boxed.
 */
export function setReserveRatio(v: EngineViews, p: number): void {
  const protocol = v.poolProtocol[p]!;
  if (!pricedByReserves(protocol)) return;
  reserveInto(v, p, 0, scratch, 0);
  const x = scratch[0]!;
  if (x > 0) {
    reserveInto(v, p, 1, scratch, 1);
    v.ratio[p] = reservePrice(protocol, x, scratch[1]!, weightRatio(v, p));
  }
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
