/**
 * A deliberately plain reference model of the engine, written from the documented rules (layout.ts
 * one-minute window definition, the README's routing rule) with bigints, Maps and no shared memory.
 * Tests replay the durable event log through it and compare with the engine's views.
 */
import type { DecodedEvent } from '../../engine/events/codec.js';

export const IVS = [60, 300, 600, 900, 1800, 3600, 21_600, 43_200, 86_400];

export interface RefCandle {
  open0: number;
  high0: number;
  low0: number;
  close0: number;
  open1: number;
  high1: number;
  low1: number;
  close1: number;
  volumeUsd: number;
  buyVolumeUsd: number;
  txns: number;
  buys: number;
}

interface RefPool {
  id: number;
  t0: number;
  t1: number;
  d0: number;
  d1: number;
  protocol: number;
  r0: bigint;
  r1: bigint;
  syncAt: string;
  ratio: number;
  p0: number;
  p1: number;
  created: number;
  /** Time of its last swap (0: none). */
  lastSwap: number;
  candles: Map<number, RefCandle>[];
}

interface RefToken {
  role: number;
  /** The price its route pool last set (read only past the hop limit). */
  price: number;
  routePool: number;
  /** USD on the weakest hop of its route. */
  routeLiq: number;
}

const rank = (role: number) => (role === 0 ? 0 : role === 3 ? 2 : 1);

/** Anchors (stablecoins, wrapped native) are priced only through anchors; the reference stablecoin never. */
function routeAllowed(role: number, via: number): boolean {
  if (role === 0) return false;
  if (role === 1) return via === 0 || via === 2;
  if (role === 2) return via === 0 || via === 1;
  return true;
}

const MAX_HOPS = 4;
const STALE_AFTER_S = 86_400;
const MIN_LIQ = 1_000;

/** A token's 1 s candle: its USD price at each swap touching it, volume of those swaps. */
export interface RefSecond {
  open: number;
  high: number;
  low: number;
  close: number;
  priceSum: number;
  volumeUsd: number;
  txns: number;
}

export class ReferenceModel {
  readonly pools = new Map<number, RefPool>();
  readonly tokens = new Map<number, RefToken>();
  /** Per token: second -> candle. */
  readonly seconds = new Map<number, Map<number, RefSecond>>();

  apply(e: DecodedEvent): void {
    switch (e.kind) {
      case 'pool_created': {
        for (const [id, info] of [
          [e.token0Id!, e.token0],
          [e.token1Id!, e.token1],
        ] as const) {
          if (!this.tokens.has(id)) this.tokens.set(id, { role: info.role, price: info.role === 0 ? 1 : 0, routePool: -1, routeLiq: 0 });
        }
        this.pools.set(e.poolId!, {
          id: e.poolId!,
          t0: e.token0Id!,
          t1: e.token1Id!,
          d0: e.token0.decimals,
          d1: e.token1.decimals,
          protocol: e.protocol,
          r0: 0n,
          r1: 0n,
          syncAt: '',
          ratio: 0,
          p0: 0,
          p1: 0,
          created: e.timestamp,
          lastSwap: 0,
          candles: IVS.map(() => new Map()),
        });
        return;
      }
      case 'sync': {
        const p = this.pools.get(e.poolId!)!;
        p.r0 = e.reserve0;
        p.r1 = e.reserve1;
        p.syncAt = `${e.key.blockNumber}:${e.key.txIndex}`;
        if (p.protocol !== 1 && p.r0 > 0n) p.ratio = this.reserveRatio(p);
        this.reprice(p, e.timestamp);
        return;
      }
      case 'mint':
      case 'burn': {
        const p = this.pools.get(e.poolId!)!;
        // A concentrated pool's burn only credits the position: its tokens leave with the collect (reserve_delta).
        if (!(p.protocol !== 1 && p.syncAt === `${e.key.blockNumber}:${e.key.txIndex}`) && !(p.protocol === 1 && e.kind === 'burn')) {
          const sign = e.kind === 'mint' ? 1n : -1n;
          p.r0 += sign * e.amount0;
          p.r1 += sign * e.amount1;
          if (p.protocol !== 1 && p.r0 > 0n) p.ratio = this.reserveRatio(p);
        }
        this.reprice(p, e.timestamp);
        return;
      }
      case 'reserve_delta': {
        const p = this.pools.get(e.poolId!)!;
        p.r0 += e.amount0;
        p.r1 += e.amount1;
        if (p.protocol !== 1 && p.r0 > 0n) p.ratio = this.reserveRatio(p);
        this.reprice(p, e.timestamp);
        return;
      }
      case 'swap': {
        const p = this.pools.get(e.poolId!)!;
        if (!(p.protocol !== 1 && p.syncAt === `${e.key.blockNumber}:${e.key.txIndex}`)) {
          p.r0 += e.amount0;
          p.r1 += e.amount1;
        }
        if (p.protocol === 1) {
          const sqrt = Number(e.sqrtPriceX96) / 2 ** 96;
          if (sqrt > 0) p.ratio = (sqrt * sqrt * 10 ** p.d0) / 10 ** p.d1;
        } else if (p.r0 > 0n) p.ratio = this.reserveRatio(p);
        p.lastSwap = e.timestamp;
        const base1 = this.reprice(p, e.timestamp);
        const a0 = this.norm(e.amount0 < 0n ? -e.amount0 : e.amount0, p.d0);
        const a1 = this.norm(e.amount1 < 0n ? -e.amount1 : e.amount1, p.d1);
        const volumeUsd = base1 ? a1 * p.p1 : a0 * p.p0;
        const isBuy = e.amount0 < 0n;
        for (const tk of [p.t0, p.t1]) {
          const price = this.price(tk);
          if (!(price > 0)) continue;
          let m = this.seconds.get(tk);
          if (!m) this.seconds.set(tk, (m = new Map()));
          const c = m.get(e.timestamp);
          if (!c) m.set(e.timestamp, { open: price, high: price, low: price, close: price, priceSum: price, volumeUsd, txns: 1 });
          else {
            c.high = Math.max(c.high, price);
            c.low = Math.min(c.low, price);
            c.close = price;
            c.priceSum += price;
            c.volumeUsd += volumeUsd;
            c.txns++;
          }
        }
        IVS.forEach((sec, i) => {
          const open = e.timestamp - (e.timestamp % sec);
          const c = p.candles[i]!.get(open);
          if (!c) {
            p.candles[i]!.set(open, {
              open0: p.p0,
              high0: p.p0,
              low0: p.p0,
              close0: p.p0,
              open1: p.p1,
              high1: p.p1,
              low1: p.p1,
              close1: p.p1,
              volumeUsd,
              buyVolumeUsd: isBuy ? volumeUsd : 0,
              txns: 1,
              buys: isBuy ? 1 : 0,
            });
          } else {
            c.high0 = Math.max(c.high0, p.p0);
            c.low0 = Math.min(c.low0, p.p0);
            c.close0 = p.p0;
            c.high1 = Math.max(c.high1, p.p1);
            c.low1 = Math.min(c.low1, p.p1);
            c.close1 = p.p1;
            c.volumeUsd += volumeUsd;
            c.buyVolumeUsd += isBuy ? volumeUsd : 0;
            c.txns++;
            c.buys += isBuy ? 1 : 0;
          }
        });
        return;
      }
      default:
        return;
    }
  }

  /**
   * Price of token 0 in token 1 of a pool priced by its reserves (x, y with decimals applied): y/x
   * for constant product (0); the marginal price of x^3*y + x*y^3 = k for a Solidly stable pool (2).
   */
  reserveRatio(p: RefPool): number {
    const x = this.norm(p.r0, p.d0);
    const y = this.norm(p.r1, p.d1);
    return p.protocol === 2 ? (3 * x * x * y + y * y * y) / (x * x * x + 3 * x * y * y) : y / x;
  }

  norm(x: bigint, decimals: number): number {
    return Number(x) / 10 ** decimals;
  }

  /**
   * Sums and price change of the window of `seconds` for pool `id` at clock `now`, at one-minute
   * resolution: the 1 m candles opened in [m - seconds + 60, m], m the open of now's minute; the
   * reference is the close of the newest 1 m candle opened before that, else the open of the oldest
   * one in it. (`_base`, the engine's base interval for the window, plays no part in the rule.)
   */
  window(id: number, seconds: number, _base: number, now: number) {
    const p = this.pools.get(id)!;
    const current = now - (now % 60);
    const start = current - seconds + 60;
    let volumeUsd = 0;
    let buyVolumeUsd = 0;
    let txns = 0;
    let buys = 0;
    let firstInWindow: RefCandle | null = null;
    let firstTime = Infinity;
    let lastBefore: RefCandle | null = null;
    let lastBeforeTime = -Infinity;
    for (const [t, c] of p.candles[0]!) {
      if (t >= start && t <= current) {
        volumeUsd += c.volumeUsd;
        buyVolumeUsd += c.buyVolumeUsd;
        txns += c.txns;
        buys += c.buys;
        if (t < firstTime) (firstTime = t), (firstInWindow = c);
      } else if (t < start && t > lastBeforeTime) (lastBeforeTime = t), (lastBefore = c);
    }
    const ref = lastBefore ? lastBefore.close0 : firstInWindow ? firstInWindow.open0 : 0;
    // The price now (through its tokens' routes as they stand) against the price one window ago.
    const now0 = this.poolPrices(p)[0];
    return { volumeUsd, buyVolumeUsd, txns, buys, priceChange: ref > 0 ? (now0 / ref - 1) * 100 : 0 };
  }

  /** Token tk's USD price through its route as it stands now. */
  price(tk: number, hops = 0): number {
    const t = this.tokens.get(tk)!;
    if (t.role === 0) return 1;
    if (t.routePool < 0 || hops === MAX_HOPS) return t.price;
    const p = this.pools.get(t.routePool)!;
    if (!(p.ratio > 0)) return 0;
    return p.t0 === tk ? p.ratio * this.price(p.t1, hops + 1) : this.price(p.t0, hops + 1) / p.ratio;
  }

  /** True when via's route reaches a reference stablecoin within `hops` hops without passing tk. */
  private reaches(via: number, tk: number, hops: number): boolean {
    for (let n = 0; n <= hops; n++) {
      if (via === tk) return false;
      const t = this.tokens.get(via)!;
      if (t.role === 0) return true;
      if (t.routePool < 0) return false;
      const p = this.pools.get(t.routePool)!;
      via = p.t0 === via ? p.t1 : p.t0;
    }
    return false;
  }

  private stale(p: RefPool, now: number): boolean {
    return now - Math.max(p.lastSwap, p.created) > STALE_AFTER_S;
  }

  private offer(tk: number, via: number, pool: RefPool, price: number, hopLiq: number, now: number): void {
    const t = this.tokens.get(tk)!;
    const v = this.tokens.get(via)!;
    if (!routeAllowed(t.role, v.role) || !(price > 0) || !Number.isFinite(price)) return;
    const weakest = Math.min(hopLiq, v.role === 0 ? Infinity : v.routeLiq);
    // The route in force takes its pool's new figures; another must win, and reach a stablecoin.
    if (t.routePool !== pool.id) {
      if (t.routePool >= 0) {
        const fresh = !this.stale(pool, now) && weakest >= MIN_LIQ;
        const currentFresh = !this.stale(this.pools.get(t.routePool)!, now) && t.routeLiq >= MIN_LIQ;
        if (fresh !== currentFresh ? !fresh : weakest <= t.routeLiq) return;
      }
      if (!this.reaches(via, tk, MAX_HOPS - 1)) return;
    }
    Object.assign(t, { price, routePool: pool.id, routeLiq: weakest });
  }

  private reprice(p: RefPool, now: number): boolean {
    const a = this.tokens.get(p.t0)!;
    const b = this.tokens.get(p.t1)!;
    const n0 = this.norm(p.r0, p.d0);
    const n1 = this.norm(p.r1, p.d1);
    if (p.ratio > 0) {
      const pb = this.price(p.t1);
      if (b.routePool !== p.id && pb > 0) this.offer(p.t0, p.t1, p, p.ratio * pb, 2 * n1 * pb, now);
      const pa = this.price(p.t0);
      if (a.routePool !== p.id && pa > 0) this.offer(p.t1, p.t0, p, pa / p.ratio, 2 * n0 * pa, now);
    }
    const [p0, p1, base1] = this.poolPrices(p);
    p.p0 = p0;
    p.p1 = p1;
    return base1;
  }

  /** Pool p's USD prices of token 0 and 1 from its tokens' routes as they stand, and whether token 1 is its base. */
  poolPrices(p: RefPool): [number, number, boolean] {
    const a = this.tokens.get(p.t0)!;
    const b = this.tokens.get(p.t1)!;
    const r0 = rank(a.role);
    const r1 = rank(b.role);
    const base1 = r1 < r0 || (r1 === r0 && b.routePool !== p.id && (a.routePool === p.id || b.routeLiq >= a.routeLiq));
    if (base1) {
      const p1 = this.price(p.t1);
      return [p.ratio * p1, p1, true];
    }
    const p0 = this.price(p.t0);
    return [p0, p.ratio > 0 ? p0 / p.ratio : 0, false];
  }
}
