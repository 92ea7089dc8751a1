/**
 * The one rule for a token's USD price, shared by the shard writer (the USD figures of each event),
 * the REST answers (token details, batch prices) and the price streams, so all show the same price
 * for the same state of the views.
 *
 * A token's price follows its route: the pool it is routed through (`tokenRoutePool`) gives its price
 * in the counterpart token, and the counterpart's USD price is itself its route's, down to a
 * reference stablecoin (1 USD by definition). Prices are read through the route as it stands, so
 * when a price a token is routed through moves, the token's price moves with it, at once, in every
 * answer and stream, whether or not the token's own pools trade. The writer chooses each token's
 * route (engine/shards/apply.ts offerRoute): a fresh route before a stale one, then the most USD
 * liquidity on the weakest hop; a route never passes through the token it prices, and reaches a
 * reference stablecoin within MAX_ROUTE_HOPS hops when it is chosen.
 *
 * routedPriceUsd is the float price the engine computes with. The price shown is that same quantity,
 * exact where the views allow: the ratio of each route pool's raw reserves (decimals applied), or a
 * stable-curve pool's marginal price at them (reserve-price.ts), a concentrated-liquidity pool's
 * price to 15 significant digits. Past MAX_ROUTE_HOPS (a route that grew longer after it was
 * chosen) the price the token's route pool last set is used. The result is cut to PRICE_DIGITS
 * significant digits, in plain notation (decimal.js: never a float's noise).
 */
import { Decimal } from 'decimal.js';
import { PoolProtocol } from '../events/model.js';
import { poolWeight, pricedByReserves, reserveInto, reservePriceFraction } from './reserve-price.js';
import type { EngineViews } from './views.js';

/** Significant digits of a shown price. */
export const PRICE_DIGITS = 18;
/** Hops a route may take to a reference stablecoin when it is chosen, and that a read follows. */
export const MAX_ROUTE_HOPS = 4;
/**
 * A route pool is stale once it has not swapped (nor been created) for this long before the event
 * that weighs it: a stale route gives way to any fresh one.
 */
export const ROUTE_STALE_AFTER_S = 86_400;
/** A route whose weakest hop holds less USD than this is stale too. */
export const MIN_ROUTE_LIQUIDITY_USD = 1_000;

const Exact = Decimal.clone({ precision: 60, toExpNeg: -100, toExpPos: 100 });
const ONE = new Exact(1);
const W32 = 4_294_967_296n;

/** Raw u128 in words[at..at+3] (little-endian u32 words) as a bigint. */
export function u128BigInt(words: Uint32Array, at: number): bigint {
  return ((BigInt(words[at + 3]!) * W32 + BigInt(words[at + 2]!)) * W32 + BigInt(words[at + 1]!)) * W32 + BigInt(words[at]!);
}

const rawScratch = new Uint32Array(8);
/** Reserves of the pool whose liquidity is summed (poolPricesFrom). */
const reserves = new Float64Array(2);

/** Copies pool p's raw reserves consistently (seqlock); false when the writer kept it busy. */
function readRaw(v: EngineViews, p: number, out: Uint32Array): boolean {
  for (let attempt = 0; attempt < 10_000; attempt++) {
    const s = Atomics.load(v.poolSeq, p);
    if ((s & 1) !== 0) continue;
    for (let k = 0; k < 8; k++) out[k] = v.reserveRaw[p * 8 + k]!;
    if (Atomics.load(v.poolSeq, p) === s) return true;
  }
  return false;
}

function floatDecimal(x: number): Decimal {
  return new Exact(x.toPrecision(15));
}

/** USD price of token t as an exact decimal where the route allows (see the file comment). */
export function exactPrice(v: EngineViews, t: number, hops = 0): Decimal {
  if (v.tokenRole[t] === 0) return ONE;
  const route = v.tokenRoutePool[t]! - 1;
  if (route < 0) return floatDecimal(v.tokenPriceUsd[t]!);
  if (hops >= MAX_ROUTE_HOPS) return floatDecimal(routedPriceUsd(v, t));
  const tokenIs0 = v.poolToken0[route] === t;
  const other = tokenIs0 ? v.poolToken1[route]! : v.poolToken0[route]!;
  const otherPrice = exactPrice(v, other, hops + 1);
  if (!pricedByReserves(v.poolProtocol[route]!)) {
    const ratio = v.ratio[route]!; // token 0 in token 1
    if (!(ratio > 0)) return floatDecimal(routedPriceUsd(v, t));
    const r = floatDecimal(ratio);
    return tokenIs0 ? r.mul(otherPrice) : otherPrice.div(r);
  }
  if (!readRaw(v, route, rawScratch)) return floatDecimal(routedPriceUsd(v, t));
  const r0 = u128BigInt(rawScratch, 0);
  const r1 = u128BigInt(rawScratch, 4);
  if (r0 === 0n || r1 === 0n) return floatDecimal(routedPriceUsd(v, t));
  // Token 0 in token 1 as an exact fraction of the raw reserves (engine/state/reserve-price.ts):
  // the reserves' ratio, or a stable curve's marginal price.
  const protocol = v.poolProtocol[route]!;
  const weighted = protocol === PoolProtocol.Weighted;
  const [num, den] = reservePriceFraction(protocol, r0, r1, v.poolDecimals0[route]!, v.poolDecimals1[route]!, weighted ? poolWeight(v, route, 0) : 1n, weighted ? poolWeight(v, route, 1) : 1n);
  const [over, under] = tokenIs0 ? [num, den] : [den, num];
  return new Exact(over.toString()).div(new Exact(under.toString())).mul(otherPrice);
}

/** Per hop of the route being followed (one thread reads at a time): the pool's ratio and which side the token is. */
const hopRatio = new Float64Array(MAX_ROUTE_HOPS);
const hopIs0 = new Uint8Array(MAX_ROUTE_HOPS);

/**
 * Token t's USD price through its route as it stands (float), 0 when it has none. The hops are
 * multiplied from the stablecoin back to t, as the price of each would be computed from its
 * counterpart's: the same digits whichever way the route's prices were last brought up to date.
 */
export function routedPriceUsd(v: EngineViews, t: number): number {
  routedPriceInto(v, t, routed, 0);
  return routed[0]!;
}

const routed = new Float64Array(1);

/** routedPriceUsd into out[i]: the shard writer's form (a price returned from a call that is not inlined is boxed, per event). */
export function routedPriceInto(v: EngineViews, t: number, out: Float64Array, i: number): void {
  const start = t;
  let n = 0;
  walkedHops = -1;
  while (v.tokenRole[t] !== 0) {
    const route = v.tokenRoutePool[t]! - 1;
    if (route < 0 || n === MAX_ROUTE_HOPS) {
      out[i] = v.tokenPriceUsd[start]!;
      return;
    }
    const ratio = v.ratio[route]!; // token 0 in token 1
    if (!(ratio > 0)) {
      out[i] = 0;
      return;
    }
    const is0 = v.poolToken0[route] === t;
    hopRatio[n] = ratio;
    hopIs0[n] = is0 ? 1 : 0;
    n++;
    t = is0 ? v.poolToken1[route]! : v.poolToken0[route]!;
  }
  let price = 1;
  for (let k = n - 1; k >= 0; k--) price = hopIs0[k] === 1 ? hopRatio[k]! * price : price / hopRatio[k]!;
  walkedHops = n;
  out[i] = price;
}

/** Hops the last routedPriceUsd of this thread walked down to a reference stablecoin; -1 when it ended otherwise (no route, the hop limit, a ratio not above 0). */
let walkedHops = -1;

/**
 * Token tk's price through pool p (its route) given its counterpart's routed price, which
 * routedPriceUsd just gave: the same digits a walk down tk's route gives (one more hop, multiplied
 * last), without walking it again when that walk reached the stablecoin with a hop to spare. The
 * counterpart's price is read from `prices[1 - side]` and tk's written to `prices[side]` (an array,
 * not arguments and a result: the writer calls this per event, and numbers crossing a call are boxed).
 */
export function priceThroughRoute(v: EngineViews, tk: number, p: number, prices: Float64Array, side: 0 | 1, otherHops: number): void {
  if (otherHops < 0 || otherHops >= MAX_ROUTE_HOPS || v.tokenRole[tk] === 0) {
    routedPriceInto(v, tk, prices, side);
    return;
  }
  walkedHops = otherHops + 1;
  const other = prices[1 - side]!;
  prices[side] = v.poolToken0[p] === tk ? v.ratio[p]! * other : other / v.ratio[p]!;
}

/** Hops of the last routedPriceUsd (or priceThroughRoute) on this thread: -1 when it did not reach a stablecoin. */
export function lastWalkedHops(): number {
  return walkedHops;
}

/** Unix seconds of the newest event that moved token t's price: the newest price time down its route. */
export function routedPriceTime(v: EngineViews, t: number): number {
  let time = v.tokenPriceTime[t]!;
  for (let n = 0; n < MAX_ROUTE_HOPS && v.tokenRole[t] !== 0; n++) {
    const route = v.tokenRoutePool[t]! - 1;
    if (route < 0) break;
    t = v.poolToken0[route] === t ? v.poolToken1[route]! : v.poolToken0[route]!;
    const at = v.tokenPriceTime[t]!;
    if (at > time) time = at;
  }
  return time;
}

/** Anchor rank of a token role: 0 reference stablecoin, 1 stablecoin or wrapped native, 2 other. */
function rank(role: number): number {
  return role === 0 ? 0 : role === 3 ? 2 : 1;
}

/**
 * Pool p's USD prices of token 0 and token 1 and its USD liquidity, from its ratio, its reserves and
 * its tokens' prices through their routes as they stand, into out[0], out[1], out[2]: the base side
 * (the token better anchored, or routed elsewhere) at its routed price, the other at the pool's
 * ratio to it. Returns true when token 1 is the base. The writer stores these with each event of
 * the pool; reads take them as they stand, so a pool's USD figures follow its tokens' prices too.
 */
export function poolPricesUsd(v: EngineViews, p: number, out: Float64Array): boolean {
  const base1 = poolBase1(v, p);
  routedPriceInto(v, base1 ? v.poolToken1[p]! : v.poolToken0[p]!, out, base1 ? 1 : 0);
  return poolPricesFrom(v, p, base1, out);
}

/** Whether token 1 is pool p's base side (poolPricesUsd): better anchored, or not routed through p and routed deeper. */
export function poolBase1(v: EngineViews, p: number): boolean {
  const t0 = v.poolToken0[p]!;
  const t1 = v.poolToken1[p]!;
  const r0 = rank(v.tokenRole[t0]!);
  const r1 = rank(v.tokenRole[t1]!);
  return r1 < r0 || (r1 === r0 && v.tokenRoutePool[t1] !== p + 1 && (v.tokenRoutePool[t0] === p + 1 || v.tokenRouteLiquidityUsd[t1]! >= v.tokenRouteLiquidityUsd[t0]!));
}

/**
 * poolPricesUsd with the base side given and its routed price in `out[1]` (base1) or `out[0]` (the
 * writer has them at hand; passed in the array, as a number argument would be boxed per event).
 */
export function poolPricesFrom(v: EngineViews, p: number, base1: boolean, out: Float64Array): boolean {
  const ratio = v.ratio[p]!;
  let p0: number;
  let p1: number;
  if (base1) {
    p1 = out[1]!;
    p0 = ratio * p1;
  } else {
    p0 = out[0]!;
    p1 = ratio > 0 ? p0 / ratio : 0;
  }
  out[0] = p0;
  out[1] = p1;
  reserveInto(v, p, 0, reserves, 0);
  reserveInto(v, p, 1, reserves, 1);
  out[2] = reserves[0]! * p0 + reserves[1]! * p1;
  return base1;
}

/**
 * True when token `via` reaches a reference stablecoin within `hops` hops of its route without
 * passing through token `tk`: so a route of tk through via keeps the route graph free of cycles.
 */
export function routeReaches(v: EngineViews, via: number, tk: number, hops: number): boolean {
  for (let n = 0; n <= hops; n++) {
    if (via === tk) return false;
    if (v.tokenRole[via] === 0) return true;
    const route = v.tokenRoutePool[via]! - 1;
    if (route < 0) return false;
    via = v.poolToken0[route] === via ? v.poolToken1[route]! : v.poolToken0[route]!;
  }
  return false;
}

/**
 * A version of token t's price: the sum of the version words it depends on (the token's and each
 * route pool's and hop token's, down the route), each of which only grows; -1 while a writer is
 * inside an update. It changes whenever the price may have.
 */
export function priceVersion(v: EngineViews, t: number): number {
  let sum = 0;
  for (let hops = 0; hops <= MAX_ROUTE_HOPS; hops++) {
    const ts = Atomics.load(v.tokenSeq, t);
    if ((ts & 1) !== 0) return -1;
    sum += ts;
    if (v.tokenRole[t] === 0) break;
    const route = v.tokenRoutePool[t]! - 1;
    if (route < 0) break;
    const ps = Atomics.load(v.poolSeq, route);
    if ((ps & 1) !== 0) return -1;
    sum += ps;
    t = v.poolToken0[route] === t ? v.poolToken1[route]! : v.poolToken0[route]!;
  }
  return sum;
}

export function priceText(d: Decimal): string {
  return d.toSignificantDigits(PRICE_DIGITS).toFixed();
}

/**
 * The versions a token's price text depends on: the token's and its route pool's version words,
 * then the counterpart's, down the route (a route change bumps the token's word). Written into
 * `out` (pairs), returns how many words; -1 while a writer is inside an update.
 */
function routeStamp(v: EngineViews, t: number, out: Int32Array): number {
  let n = 0;
  for (let hops = 0; hops <= MAX_ROUTE_HOPS; hops++) {
    const ts = Atomics.load(v.tokenSeq, t);
    if ((ts & 1) !== 0) return -1;
    out[n++] = ts;
    if (v.tokenRole[t] === 0) break;
    const route = v.tokenRoutePool[t]! - 1;
    if (route < 0) break;
    const ps = Atomics.load(v.poolSeq, route);
    if ((ps & 1) !== 0) return -1;
    out[n++] = ps;
    t = v.poolToken0[route] === t ? v.poolToken1[route]! : v.poolToken0[route]!;
  }
  return n;
}

interface CachedText {
  readonly stamp: Int32Array;
  readonly n: number;
  readonly text: string;
}

const STAMP_WORDS = 2 * (MAX_ROUTE_HOPS + 1);
/** Tokens whose price text is kept between calls (per thread); cleared whole when full. */
const MAX_CACHED = 65_536;

/**
 * Price text per token, kept while none of the version words it depends on moved (a REST answer or
 * a stream event reads a price far more often than the market moves it). One per thread.
 */
export class PriceTexts {
  private readonly cache = new Map<number, CachedText>();
  private readonly stamp = new Int32Array(STAMP_WORDS);
  private readonly after = new Int32Array(STAMP_WORDS);
  private readonly v: EngineViews;

  constructor(views: EngineViews) {
    this.v = views;
  }

  /** Token t's price as shown (PRICE_DIGITS significant digits, plain notation). */
  text(t: number): string {
    const v = this.v;
    const n = routeStamp(v, t, this.stamp);
    const hit = this.cache.get(t);
    if (n > 0 && hit !== undefined && hit.n === n && sameWords(hit.stamp, this.stamp, n)) return hit.text;
    const text = priceText(exactPrice(v, t));
    // Cached only when nothing moved while it was computed.
    if (n > 0 && routeStamp(v, t, this.after) === n && sameWords(this.after, this.stamp, n)) {
      if (this.cache.size >= MAX_CACHED) this.cache.clear();
      this.cache.set(t, { stamp: this.stamp.slice(0, n), n, text });
    }
    return text;
  }
}

function sameWords(a: Int32Array, b: Int32Array, n: number): boolean {
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}
