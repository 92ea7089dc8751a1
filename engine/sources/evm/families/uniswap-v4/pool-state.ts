/**
 * One Uniswap v4 pool as its logs tell it: the current price and tick, the liquidity of each tick
 * range (all positions over it together), and the pool's principal at that price: the exact amounts
 * its positions' liquidity is worth, summed over the ranges and rounded down once.
 *
 * A range holds only token 0 while the tick is below it, only token 1 from its upper tick on, both
 * inside it (the sides Pool.modifyLiquidity uses). The principal is kept as sums over the ranges of
 * each side, so a swap costs O(1) BigInt work plus the ranges whose bounds its tick crossed:
 *   amount0 = Q96 * (L_in / P - Σ_in L/sU + Σ_above (L/sL - L/sU)),
 *   amount1 = (L_in * P - Σ_in L*sL + Σ_below L*(sU - sL)) / Q96,
 * with P the sqrt price, sL and sU a range's bound sqrt prices (Q64.96) and L its liquidity. The
 * terms L/s are fixed-point with 256 fractional bits (their rounding is far below one token unit),
 * the others exact integers.
 */
import { Q96, sqrtPriceAtTick } from './math.js';

/** Fixed-point scale of the liquidity-over-sqrt-price terms. */
const K = 1n << 256n;

/** Which amounts a range holds at the pool's tick: token 0 only (tick below it), both, token 1 only (tick at or above its upper tick). */
const enum Side {
  Above = 0,
  Inside = 1,
  Below = 2,
}

const sideOf = (tick: number, lower: number, upper: number): Side => (tick < lower ? Side.Above : tick < upper ? Side.Inside : Side.Below);

interface Range {
  readonly lower: number;
  readonly upper: number;
  readonly sqrtLower: bigint;
  readonly sqrtUpper: bigint;
  liquidity: bigint;
  side: Side;
  /** floor(L * K / sL) and floor(L * K / sU). */
  invLower: bigint;
  invUpper: bigint;
}

export class V4PoolState {
  sqrtPriceX96: bigint;
  tick: number;
  /** Ranges by `lower:upper`. */
  private readonly ranges = new Map<string, Range>();
  /** The ranges bounded at each tick, and those ticks in increasing order (to find the ranges a price move crosses). */
  private readonly atBound = new Map<number, Range[]>();
  private readonly bounds: number[] = [];
  /** Sums over the ranges: Σ_in L, Σ_in L*sL, Σ_in floor(L*K/sU), Σ_above (floor(L*K/sL) - floor(L*K/sU)), Σ_below L*(sU - sL). */
  private liquidityIn = 0n;
  private lowerIn = 0n;
  private invUpperIn = 0n;
  private zeroAbove = 0n;
  private oneBelow = 0n;

  constructor(sqrtPriceX96: bigint, tick: number) {
    this.sqrtPriceX96 = sqrtPriceX96;
    this.tick = tick;
  }

  /** The principal at the current price: [token 0, token 1], rounded down. */
  reserves(): [bigint, bigint] {
    const x = this.liquidityIn === 0n ? 0n : (this.liquidityIn * K) / this.sqrtPriceX96;
    const n0 = x - this.invUpperIn + this.zeroAbove;
    const n1 = this.liquidityIn * this.sqrtPriceX96 - this.lowerIn + this.oneBelow;
    return [n0 > 0n ? (Q96 * n0) / K : 0n, n1 > 0n ? n1 / Q96 : 0n];
  }

  /** Moves the pool to a price and tick; the ranges whose bounds the tick crossed change sides. */
  movePrice(sqrtPriceX96: bigint, tick: number): void {
    const from = this.tick;
    this.sqrtPriceX96 = sqrtPriceX96;
    this.tick = tick;
    if (tick === from) return;
    // A range changes side when `tick < bound` flips for one of its bounds: a bound in (min, max].
    const lo = Math.min(from, tick);
    const hi = Math.max(from, tick);
    const b = this.bounds;
    for (let i = firstAbove(b, lo); i < b.length && b[i]! <= hi; i++) {
      for (const r of this.atBound.get(b[i]!)!) {
        const side = sideOf(tick, r.lower, r.upper);
        if (side === r.side) continue;
        this.add(r, -1n);
        r.side = side;
        this.add(r, 1n);
      }
    }
  }

  /** Adds `delta` (signed) to the liquidity of range [lower, upper). */
  changeLiquidity(lower: number, upper: number, delta: bigint): void {
    const id = `${lower}:${upper}`;
    let r = this.ranges.get(id);
    if (!r) {
      r = { lower, upper, sqrtLower: sqrtPriceAtTick(lower), sqrtUpper: sqrtPriceAtTick(upper), liquidity: 0n, side: sideOf(this.tick, lower, upper), invLower: 0n, invUpper: 0n };
      this.ranges.set(id, r);
      this.bound(lower, r);
      this.bound(upper, r);
    } else this.add(r, -1n);
    r.liquidity += delta;
    if (r.liquidity <= 0n) {
      this.ranges.delete(id);
      this.unbound(lower, r);
      this.unbound(upper, r);
      return;
    }
    r.invLower = (r.liquidity * K) / r.sqrtLower;
    r.invUpper = (r.liquidity * K) / r.sqrtUpper;
    this.add(r, 1n);
  }

  /** Adds (sign 1n) or takes out (-1n) a range's terms from the sums of its side. */
  private add(r: Range, sign: bigint): void {
    const l = r.liquidity;
    if (r.side === Side.Inside) {
      this.liquidityIn += sign * l;
      this.lowerIn += sign * l * r.sqrtLower;
      this.invUpperIn += sign * r.invUpper;
    } else if (r.side === Side.Above) this.zeroAbove += sign * (r.invLower - r.invUpper);
    else this.oneBelow += sign * l * (r.sqrtUpper - r.sqrtLower);
  }

  private bound(tick: number, r: Range): void {
    const list = this.atBound.get(tick);
    if (list) {
      list.push(r);
      return;
    }
    this.atBound.set(tick, [r]);
    this.bounds.splice(firstAbove(this.bounds, tick - 1), 0, tick);
  }

  private unbound(tick: number, r: Range): void {
    const list = this.atBound.get(tick)!;
    const i = list.indexOf(r);
    if (i >= 0) list.splice(i, 1);
    if (list.length > 0) return;
    this.atBound.delete(tick);
    this.bounds.splice(firstAbove(this.bounds, tick - 1), 1);
  }
}

/** Index of the first element of sorted `xs` greater than `x`. */
function firstAbove(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
