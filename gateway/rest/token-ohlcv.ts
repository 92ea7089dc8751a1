/**
 * GET /networks/{network}/tokens/{token_address}/ohlcv: a token's USD candles over all its pools.
 *
 * Each pool contributes its candles from the token's side (token 0: open0..close0, token 1:
 * open1..close1). Per open time, open, high, low and close are the averages of the contributing
 * pools' values weighted by each pool's liquidity_usd as read now (not as of the candle: the
 * history of liquidity is not kept), over the pools that priced the token (price > 0); when none of
 * those has liquidity, they weigh equally. Volume is the sum over every pool. The high is thus
 * the weighted average of the pools' highs, not the highest price paid anywhere.
 *
 * Range rules are those of pool OHLCV: the first `limit` aggregated candles from start, or the
 * last `count_back` up to end. A pool's candles beyond its first (last) `want` in the range can
 * never be among the first (last) `want` open times of the union, so each pool reads only `want`.
 */
import { createPoolState } from '../../engine/read/index.js';
import type { ServeContext } from '../context.js';
import { QueryParser } from '../http/params.js';
import { candleJson, candleRange, PoolCandleReader, side, type PriceCandle } from './candles.js';
import { networkOrNotFound, tokenOrNotFound } from './resolve.js';
import { tokenOhlcvQuery } from './schemas-history.js';

interface Bucket {
  weight: number;
  priced: number;
  open: number;
  high: number;
  low: number;
  close: number;
  /** Unweighted sums, used when no pricing pool has liquidity. */
  open1: number;
  high1: number;
  low1: number;
  close1: number;
  volume: number;
}

/** Aggregates a token's candles across its pools; one per caller (it owns a pool reader). */
export class TokenCandleReader {
  private readonly ctx: ServeContext;
  private readonly pools: PoolCandleReader;
  private readonly state = createPoolState();

  constructor(ctx: ServeContext) {
    this.ctx = ctx;
    this.pools = new PoolCandleReader(ctx);
  }

  /** Up to `want` token candles opening in [from, to], oldest first: the first, or the last when `backward`. */
  read(token: number, interval: number, from: number, to: number, want: number, backward: boolean): PriceCandle[] {
    const buckets = new Map<number, Bucket>();
    const reg = this.ctx.read.catalog;
    for (let p = reg.firstPoolOfToken(token); p >= 0; p = reg.nextPoolOfToken(token, p)) {
      const candles = this.pools.read(p, interval, from, to, want, backward);
      if (candles.length === 0) continue;
      if (!this.ctx.read.readPool(p, this.state, false, 'row')) throw new Error(`pool ${p} state did not settle`);
      const liquidity = this.state.liquidityUsd > 0 ? this.state.liquidityUsd : 0;
      for (const raw of candles) {
        const c = side(raw, reg.poolToken1(p) === token && reg.poolToken0(p) !== token);
        let b = buckets.get(c.time);
        if (b === undefined) {
          b = { weight: 0, priced: 0, open: 0, high: 0, low: 0, close: 0, open1: 0, high1: 0, low1: 0, close1: 0, volume: 0 };
          buckets.set(c.time, b);
        }
        b.volume += c.volume;
        if (!(c.close > 0)) continue;
        b.priced++;
        b.weight += liquidity;
        b.open += liquidity * c.open;
        b.high += liquidity * c.high;
        b.low += liquidity * c.low;
        b.close += liquidity * c.close;
        b.open1 += c.open;
        b.high1 += c.high;
        b.low1 += c.low;
        b.close1 += c.close;
      }
    }
    let times = [...buckets.keys()].sort((a, b) => a - b);
    times = backward ? times.slice(Math.max(0, times.length - want)) : times.slice(0, want);
    return times.map((time) => {
      const b = buckets.get(time)!;
      if (b.weight > 0) return { time, open: b.open / b.weight, high: b.high / b.weight, low: b.low / b.weight, close: b.close / b.weight, volume: b.volume };
      const n = b.priced;
      if (n === 0) return { time, open: 0, high: 0, low: 0, close: 0, volume: b.volume };
      return { time, open: b.open1 / n, high: b.high1 / n, low: b.low1 / n, close: b.close1 / n, volume: b.volume };
    });
  }
}

export function createTokenOhlcv(ctx: ServeContext): (network: string, address: string, query: string) => Buffer {
  const parser = new QueryParser(tokenOhlcvQuery);
  const reader = new TokenCandleReader(ctx);

  return (network, address, query) => {
    const token = tokenOrNotFound(ctx.read.catalog, networkOrNotFound(ctx.read.catalog, network), address);
    const q = parser.parse(query);
    const r = candleRange(q, ctx.now());
    const candles = reader.read(token, r.interval, r.from, r.to, r.want, r.backward);
    return Buffer.from(`[${candles.map((c) => candleJson(c, r.seconds)).join(',')}]`, 'latin1');
  };
}
