/**
 * GET /networks/{network}/pools/{pool_address}/indicators and
 * GET /networks/{network}/tokens/{token_address}/indicators: SMA, EMA, RSI, MACD and Bollinger
 * bands over the closes of the candles pool (or token) OHLCV would answer with the same
 * parameters, one entry per candle.
 *
 * Candles exist only for intervals with trades, so the series is the sequence of those candles
 * (no gap filling). Warm-up: up to WARM_UP_FACTOR × the longest period (plus the MACD signal
 * period) candles opening before `start` are read and computed over, then dropped from the answer;
 * a value still not computable (too little history) is null.
 */
import type { OhlcvPlanGate } from './plan-window.js';
import { bbands, ema, macd, rsi, sma } from '../../engine/read/index.js';
import type { ServeContext } from '../context.js';
import { num } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import { rfc3339 } from '../http/time.js';
import { candleRange, PoolCandleReader, side, type CandleRange, type PriceCandle } from './candles.js';
import { networkOrNotFound, poolOrNotFound, tokenOrNotFound } from './resolve.js';
import { indicatorsQuery, type IndicatorsQuery } from './schemas-history.js';
import { TokenCandleReader } from './token-ohlcv.js';

export const WARM_UP_FACTOR = 3;

/** Candles to read before `start` so the averages have settled by then. */
export function warmUpCandles(q: IndicatorsQuery): number {
  return WARM_UP_FACTOR * Math.max(q.period, q.macd_slow) + q.macd_signal;
}

const val = (x: number): string => (Number.isNaN(x) ? 'null' : num(x));

/** Renders the entries of candles[first..], computing over all of `candles`. */
export function renderIndicators(candles: readonly PriceCandle[], first: number, seconds: number, q: IndicatorsQuery): Buffer {
  const close = Float64Array.from(candles, (c) => c.close);
  const want = q.indicators;
  const s = want.has('sma') ? sma(close, q.period) : null;
  const e = want.has('ema') ? ema(close, q.period) : null;
  const r = want.has('rsi') ? rsi(close, q.period) : null;
  const m = want.has('macd') ? macd(close, q.macd_fast, q.macd_slow, q.macd_signal) : null;
  const b = want.has('bbands') ? bbands(close, q.period, q.bbands_stddev) : null;
  const rows: string[] = [];
  for (let i = first; i < candles.length; i++) {
    const c = candles[i]!;
    let row = `{"timestamp":"${rfc3339(c.time)}","time_open":"${rfc3339(c.time)}","time_close":"${rfc3339(c.time + seconds)}","close":${num(c.close)}`;
    if (s !== null) row += `,"sma":${val(s[i]!)}`;
    if (e !== null) row += `,"ema":${val(e[i]!)}`;
    if (r !== null) row += `,"rsi":${val(r[i]!)}`;
    if (m !== null) row += `,"macd":{"macd":${val(m.macd[i]!)},"signal":${val(m.signal[i]!)},"histogram":${val(m.histogram[i]!)}}`;
    if (b !== null) row += `,"bbands":{"upper":${val(b.upper[i]!)},"middle":${val(b.middle[i]!)},"lower":${val(b.lower[i]!)}}`;
    rows.push(`${row}}`);
  }
  return Buffer.from(`[${rows.join(',')}]`, 'latin1');
}

type Read = (from: number, to: number, want: number, backward: boolean) => PriceCandle[];

function answer(read: Read, r: CandleRange, q: IndicatorsQuery): Buffer {
  const main = read(r.from, r.to, r.want, r.backward);
  // Warm-up: the candles just before the first one answered (before `start`, or before the
  // first of the last `count_back`).
  const firstTime = main.length > 0 ? main[0]!.time : r.from;
  const warm = firstTime > r.earliest ? read(r.earliest, firstTime - 1, warmUpCandles(q), true) : [];
  return renderIndicators(warm.concat(main), warm.length, r.seconds, q);
}

/** Pool indicators are plan-capped like pool OHLCV: `gate` is the caller's plan, when plans apply. */
export function createPoolIndicators(ctx: ServeContext): (network: string, address: string, query: string, gate?: OhlcvPlanGate) => Buffer {
  const parser = new QueryParser(indicatorsQuery);
  const reader = new PoolCandleReader(ctx);
  return (network, address, query, gate) => {
    const pool = poolOrNotFound(ctx.read.catalog, networkOrNotFound(ctx.read.catalog, network), address);
    const q = parser.parse(query);
    const r = candleRange(q, ctx.now(), gate, query);
    const read: Read = (from, to, want, backward) => reader.read(pool, r.interval, from, to, want, backward).map((c) => side(c, q.inversed));
    return answer(read, r, q);
  };
}

export function createTokenIndicators(ctx: ServeContext): (network: string, address: string, query: string) => Buffer {
  const parser = new QueryParser(indicatorsQuery);
  const reader = new TokenCandleReader(ctx);
  return (network, address, query) => {
    const token = tokenOrNotFound(ctx.read.catalog, networkOrNotFound(ctx.read.catalog, network), address);
    const q = parser.parse(query);
    const r = candleRange(q, ctx.now());
    const read: Read = (from, to, want, backward) => reader.read(token, r.interval, from, to, want, backward);
    return answer(read, r, q);
  };
}
