/**
 * Candle reading shared by the history endpoints: a pool's candles of one interval (the engine's
 * read surface joins its ring and the store: engine/read/candles.ts), the OHLCV range rules, and
 * the JSON candle shape of pool OHLCV.
 */
import { applyPlanWindow, type OhlcvPlanGate } from './plan-window.js';
import { type CandleSink, INTERVAL_SECONDS, intervalIndex, PoolCandles } from '../../engine/read/index.js';
import type { ServeContext } from '../context.js';
import { invalidParameter } from '../errors.js';
import { num } from '../http/json.js';
import { resolveTime, rfc3339, type TimeSpec } from '../http/time.js';
import type { PoolOhlcvQuery } from './schemas.js';

/** One candle: open time, then token 0's OHLC, token 1's OHLC (USD), then USD volume. */
export interface Candle {
  readonly time: number;
  readonly open0: number;
  readonly high0: number;
  readonly low0: number;
  readonly close0: number;
  readonly open1: number;
  readonly high1: number;
  readonly low1: number;
  readonly close1: number;
  readonly volumeUsd: number;
}

/** The candles an OHLCV-style query asks for. */
export interface CandleRange {
  readonly interval: number;
  readonly seconds: number;
  /** Open-time bounds, both inclusive, aligned down to the interval. */
  readonly from: number;
  readonly to: number;
  /** true: the last `want` candles of the range (count_back); false: the first `want`. */
  readonly backward: boolean;
  readonly want: number;
  /** Earliest open time the caller's plan reaches (warm-up stops there); 0 when uncapped. */
  readonly earliest: number;
}

function resolveOrReject(spec: TimeSpec, now: number, param: string): number {
  const t = resolveTime(spec, now);
  if (Number.isNaN(t)) throw invalidParameter(param, 'is out of range');
  return t;
}

/**
 * The range rules of pool OHLCV: start required, end defaults to now, count_back counts back from
 * end; with a plan `gate`, its finest interval and history window (plan-window.ts).
 */
export function candleRange(q: PoolOhlcvQuery, nowSeconds: number, gate?: OhlcvPlanGate, rawQuery = ''): CandleRange {
  const now = Math.floor(nowSeconds);
  const asked = resolveOrReject(q.start, now, 'start');
  const end = q.end === undefined ? now : resolveOrReject(q.end, now, 'end');
  if (end < asked) throw invalidParameter('end', 'must not be before start');
  const windowed = applyPlanWindow(gate, rawQuery, q.interval, asked, end, now);
  const start = windowed.start;
  const interval = intervalIndex(windowed.interval);
  const seconds = INTERVAL_SECONDS[interval]!;
  return {
    interval,
    seconds,
    from: start - (start % seconds),
    to: end - (end % seconds),
    backward: q.count_back !== undefined,
    want: q.count_back ?? q.limit,
    earliest: windowed.edge > 0 ? windowed.edge : 0,
  };
}

/** Collects candles as Candle objects (PoolCandles emits them oldest first). */
class CandleList implements CandleSink {
  out: Candle[] = [];

  candle(time: number, open0: number, high0: number, low0: number, close0: number, open1: number, high1: number, low1: number, close1: number, volumeUsd: number): void {
    this.out.push({ time, open0, high0, low0, close0, open1, high1, low1, close1, volumeUsd });
  }
}

/** Reads pool candles; one per caller (it owns a ring copy buffer). */
export class PoolCandleReader {
  private readonly candles: PoolCandles;

  constructor(ctx: ServeContext) {
    this.candles = new PoolCandles(ctx.read);
  }

  /**
   * Up to `want` candles of pool p and `interval` opening in [from, to], oldest first: the first
   * ones, or the last ones when `backward`.
   */
  read(p: number, interval: number, from: number, to: number, want: number, backward: boolean): Candle[] {
    const list = new CandleList();
    this.candles.readAll(p, interval, from, to, want, backward, list);
    return list.out;
  }

  /** The candles a CandleRange selects. */
  readRange(p: number, r: CandleRange): Candle[] {
    return this.read(p, r.interval, r.from, r.to, r.want, r.backward);
  }
}

/** A candle as one token's prices: open, high, low, close, volume. */
export interface PriceCandle {
  readonly time: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number;
}

/** The side of a pool candle: token 0's prices, or token 1's. */
export function side(c: Candle, token1: boolean): PriceCandle {
  return token1
    ? { time: c.time, open: c.open1, high: c.high1, low: c.low1, close: c.close1, volume: c.volumeUsd }
    : { time: c.time, open: c.open0, high: c.high0, low: c.low0, close: c.close0, volume: c.volumeUsd };
}

/** The JSON candle of pool OHLCV: timestamp, time_open, time_close, open, high, low, close, volume. */
export function candleJson(c: PriceCandle, seconds: number): string {
  const open = rfc3339(c.time);
  return (
    `{"timestamp":"${open}","time_open":"${open}","time_close":"${rfc3339(c.time + seconds)}"` +
    `,"open":${num(c.open)},"high":${num(c.high)},"low":${num(c.low)},"close":${num(c.close)},"volume":${num(c.volume)}}`
  );
}
