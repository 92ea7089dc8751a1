/**
 * GET /networks/{network}/pools/{pool_address}/ohlcv: a pool's candles, oldest first, only for
 * intervals that had trades, as the engine's read surface joins them (engine/read/candles.ts:
 * the pool's ring, then the sealed ones in LMDB below it).
 *
 * Without count_back: the first `limit` candles opening in [start, end] (start aligned down).
 * With count_back: the last `count_back` candles opening in that range.
 *
 * Two levels of reuse, both keyed by the aligned range (relative times keep hitting):
 *  - the whole body, while the pool's seqlock version is unchanged;
 *  - the rendered run of stored candles, which does not depend on that version for a pool holding
 *    a ring block (the candles below its ring are closed), so a pool that keeps trading only
 *    re-renders its ring candles; a quiet pool's includes its version (its open candles are stored).
 * A body or run that read LMDB below an evicted ring also expires after STORE_BACKED_TTL_MS: a
 * candle sealed and already evicted may still be on its way to LMDB, and no version moves when
 * it lands.
 */
import { type CandleSink, INTERVAL_SECONDS, PoolCandles } from '../../engine/read/index.js';
import type { ServeContext } from '../context.js';
import type { ResponseCache } from '../http/cache.js';
import { num } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import { rfc3339 } from '../http/time.js';
import { candleRange } from './candles.js';
import { networkOrNotFound, poolOrNotFound } from './resolve.js';
import type { OhlcvPlanGate } from './plan-window.js';
import { poolOhlcvQuery } from './schemas.js';

export type { OhlcvPlanGate } from './plan-window.js';

export const STORE_BACKED_TTL_MS = 1000; // 1 s
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');
const EMPTY = Buffer.alloc(0);

/** Renders candles as comma-separated JSON objects (one token's side); contiguous candles share one time text. */
class CandleWriter implements CandleSink {
  private readonly seconds: number;
  private readonly inversed: boolean;
  private text = '';
  private nextOpen = -1;
  private nextOpenText = '';

  constructor(seconds: number, inversed: boolean) {
    this.seconds = seconds;
    this.inversed = inversed;
  }

  candle(time: number, open0: number, high0: number, low0: number, close0: number, open1: number, high1: number, low1: number, close1: number, volumeUsd: number): void {
    if (this.inversed) this.add(time, open1, high1, low1, close1, volumeUsd);
    else this.add(time, open0, high0, low0, close0, volumeUsd);
  }

  private add(time: number, open: number, high: number, low: number, close: number, volume: number): void {
    const openText = time === this.nextOpen ? this.nextOpenText : rfc3339(time);
    this.nextOpen = time + this.seconds;
    this.nextOpenText = rfc3339(this.nextOpen);
    this.text +=
      `${this.text === '' ? '' : ','}{"timestamp":"${openText}","time_open":"${openText}","time_close":"${this.nextOpenText}"` +
      `,"open":${num(open)},"high":${num(high)},"low":${num(low)},"close":${num(close)},"volume":${num(volume)}}`;
  }

  bytes(): Buffer {
    return this.text === '' ? EMPTY : Buffer.from(this.text, 'latin1');
  }
}

interface StoredRun {
  readonly body: Buffer;
  readonly items: number;
  readonly expiresAtMs: number;
}

export function createPoolOhlcv(
  ctx: ServeContext,
  cache: ResponseCache,
): (network: string, address: string, query: string, gate?: OhlcvPlanGate) => Buffer {
  const parser = new QueryParser(poolOhlcvQuery);
  const candles = new PoolCandles(ctx.read);

  /** The stored part of the read `candles` was opened for, rendered (cached: PoolCandles.storedVersion says what it depends on). */
  function storedRun(p: number, iv: number, inversed: boolean, from: number, backward: boolean): StoredRun {
    const key = `s:${p}:${iv}:${inversed ? 1 : 0}:${from}:${candles.storeTo}:${backward ? 'b' : 'f'}${candles.storeWant}:${candles.storedVersion}`;
    const hit = cache.get(key, 0);
    if (hit !== undefined) return hit;
    const w = new CandleWriter(INTERVAL_SECONDS[iv]!, inversed);
    const items = candles.readStored(w);
    const run = { body: w.bytes(), items, expiresAtMs: candles.storeMayGrow ? performance.now() + STORE_BACKED_TTL_MS : 0 };
    cache.set(key, 0, run.body, run.expiresAtMs, items);
    return run;
  }

  return (network, address, query, gate) => {
    const p = poolOrNotFound(ctx.read.catalog, networkOrNotFound(ctx.read.catalog, network), address);
    const q = parser.parse(query);
    const { interval: iv, seconds, from, to, backward, want } = candleRange(q, ctx.now(), gate, query);

    const key = `o:${p}:${iv}:${q.inversed ? 1 : 0}:${from}:${to}:${backward ? 'b' : 'f'}${want}`;
    const cached = cache.get(key, ctx.read.poolVersion(p));
    if (cached !== undefined) return cached.body;

    candles.open(p, iv, from, to, want, backward);
    const stored = candles.storeWant > 0 ? storedRun(p, iv, q.inversed, from, backward) : null;
    const w = new CandleWriter(seconds, q.inversed);
    candles.emitRing(stored?.items ?? 0, w);
    const recent = w.bytes();
    const older = stored?.body ?? EMPTY;
    const body = Buffer.concat([OPEN, older, older.length > 0 && recent.length > 0 ? COMMA : EMPTY, recent, CLOSE]);
    cache.set(key, candles.version, body, stored?.expiresAtMs ?? 0);
    return body;
  };
}
