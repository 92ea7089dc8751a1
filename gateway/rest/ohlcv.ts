/**
 * GET /networks/{network}/pools/{pool_address}/ohlcv: a pool's candles, oldest first, only for
 * intervals that had trades. Recent candles come from the shared-memory ring, older sealed ones
 * from LMDB; the two are joined at the ring's oldest retained candle, so none appears twice.
 *
 * Without count_back: the first `limit` candles opening in [start, end] (start aligned down).
 * With count_back: the last `count_back` candles opening in that range.
 *
 * Two levels of reuse, both keyed by the aligned range (relative times keep hitting):
 *  - the whole body, while the pool's seqlock version is unchanged;
 *  - the rendered run of stored candles, which does not depend on that version (sealed candles
 *    never change), so a pool that keeps trading only re-renders its ring candles.
 * A body or run that read LMDB below an evicted ring also expires after STORE_BACKED_TTL_MS: a
 * candle sealed and already evicted may still be on its way to LMDB, and no version moves when
 * it lands.
 */
import { INTERVAL_SECONDS, intervalIndex } from '../../engine/state/layout.js';
import { createRingCandles, readRing, type RingCandles } from '../../engine/state/read.js';
import { storedCandles, type StoredCandle } from '../../engine/store/candles.js';
import type { CandleRecord } from '../../engine/store/store.js';
import type { GatewayContext } from '../context.js';
import { invalidParameter } from '../errors.js';
import type { ResponseCache } from '../http/cache.js';
import { num } from '../http/json.js';
import { QueryParser } from '../http/params.js';
import { resolveTime, rfc3339, type TimeSpec } from '../http/time.js';
import { networkOrNotFound, poolOrNotFound } from './resolve.js';
import { applyPlanWindow, type OhlcvPlanGate } from './plan-window.js';
import { poolOhlcvQuery } from './schemas.js';

export type { OhlcvPlanGate } from './plan-window.js';

export const STORE_BACKED_TTL_MS = 1000; // 1 s
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');
const EMPTY = Buffer.alloc(0);

/** Renders candles as comma-separated JSON objects; contiguous candles share one time text. */
class CandleWriter {
  private readonly seconds: number;
  private text = '';
  private nextOpen = -1;
  private nextOpenText = '';

  constructor(seconds: number) {
    this.seconds = seconds;
  }

  add(time: number, open: number, high: number, low: number, close: number, volume: number): void {
    const openText = time === this.nextOpen ? this.nextOpenText : rfc3339(time);
    this.nextOpen = time + this.seconds;
    this.nextOpenText = rfc3339(this.nextOpen);
    this.text +=
      `${this.text === '' ? '' : ','}{"timestamp":"${openText}","time_open":"${openText}","time_close":"${this.nextOpenText}"` +
      `,"open":${num(open)},"high":${num(high)},"low":${num(low)},"close":${num(close)},"volume":${num(volume)}}`;
  }

  addRecord(time: number, rec: CandleRecord, inversed: boolean): void {
    const o = inversed ? 4 : 0;
    this.add(time, rec[o]!, rec[o + 1]!, rec[o + 2]!, rec[o + 3]!, rec[8]!);
  }

  addRing(r: RingCandles, k: number, inversed: boolean): void {
    if (inversed) this.add(r.time[k]!, r.open1[k]!, r.high1[k]!, r.low1[k]!, r.close1[k]!, r.volumeUsd[k]!);
    else this.add(r.time[k]!, r.open0[k]!, r.high0[k]!, r.low0[k]!, r.close0[k]!, r.volumeUsd[k]!);
  }

  bytes(): Buffer {
    return this.text === '' ? EMPTY : Buffer.from(this.text, 'latin1');
  }
}

function resolveOrReject(spec: TimeSpec, now: number, param: string): number {
  const t = resolveTime(spec, now);
  if (Number.isNaN(t)) throw invalidParameter(param, 'is out of range');
  return t;
}

interface StoredRun {
  readonly body: Buffer;
  readonly items: number;
  readonly expiresAtMs: number;
}

export function createPoolOhlcv(
  ctx: GatewayContext,
  cache: ResponseCache,
): (network: string, address: string, query: string, gate?: OhlcvPlanGate) => Buffer {
  const parser = new QueryParser(poolOhlcvQuery);
  const ring = createRingCandles();

  /** Up to `want` stored candles opening in [from, to]: the first ones, or the last ones when backward. */
  function storedRun(p: number, iv: number, inversed: boolean, from: number, to: number, backward: boolean, want: number, evicted: boolean): StoredRun {
    const key = `s:${p}:${iv}:${inversed ? 1 : 0}:${from}:${to}:${backward ? 'b' : 'f'}${want}`;
    const hit = cache.get(key, 0);
    if (hit !== undefined) return hit;
    const w = new CandleWriter(INTERVAL_SECONDS[iv]!);
    // Backward: the newest `want` candles, rendered oldest first.
    const found: StoredCandle[] = [];
    for (const c of storedCandles(ctx.store, p, iv, from, to, backward)) {
      found.push(c);
      if (found.length >= want) break;
    }
    if (backward) found.reverse();
    for (const c of found) w.addRecord(c.time, c.record, inversed);
    const items = found.length;
    const run = { body: w.bytes(), items, expiresAtMs: evicted ? performance.now() + STORE_BACKED_TTL_MS : 0 };
    cache.set(key, 0, run.body, run.expiresAtMs, items);
    return run;
  }

  return (network, address, query, gate) => {
    const p = poolOrNotFound(ctx.registry, networkOrNotFound(ctx.registry, network), address);
    const q = parser.parse(query);
    const now = Math.floor(ctx.now());
    let start = resolveOrReject(q.start, now, 'start');
    const end = q.end === undefined ? now : resolveOrReject(q.end, now, 'end');
    if (end < start) throw invalidParameter('end', 'must not be before start');
    const windowed = applyPlanWindow(gate, query, q.interval, start, end, now);
    start = windowed.start;
    const interval = windowed.interval;
    const iv = intervalIndex(interval);
    const seconds = INTERVAL_SECONDS[iv]!;
    const from = start - (start % seconds);
    const to = end - (end % seconds);
    const backward = q.count_back !== undefined;
    const want = q.count_back ?? q.limit;

    const key = `o:${p}:${iv}:${q.inversed ? 1 : 0}:${from}:${to}:${backward ? 'b' : 'f'}${want}`;
    const cached = cache.get(key, Atomics.load(ctx.views.poolSeq, p));
    if (cached !== undefined) return cached.body;

    if (!readRing(ctx.views, p, iv, from, to, ring)) throw new Error(`pool ${p} candles did not settle`);
    // Older candles are in LMDB when the range starts below the ring's oldest retained candle.
    const storeTo = ring.opened === 0 ? -1 : Math.min(to, ring.oldestTime - 1);
    const evicted = ring.opened > ring.slots;
    let stored: StoredRun | null = null;
    let firstRing: number;
    let lastRing: number;
    if (backward) {
      const fromRing = Math.min(want, ring.count);
      firstRing = ring.count - fromRing;
      lastRing = ring.count;
      if (storeTo >= from && fromRing < want) stored = storedRun(p, iv, q.inversed, from, storeTo, true, want - fromRing, evicted);
    } else {
      if (storeTo >= from) stored = storedRun(p, iv, q.inversed, from, storeTo, false, want, evicted);
      firstRing = 0;
      lastRing = Math.min(ring.count, want - (stored?.items ?? 0));
    }
    const w = new CandleWriter(seconds);
    for (let k = firstRing; k < lastRing; k++) w.addRing(ring, k, q.inversed);
    const recent = w.bytes();
    const older = stored?.body ?? EMPTY;
    const body = Buffer.concat([OPEN, older, older.length > 0 && recent.length > 0 ? COMMA : EMPTY, recent, CLOSE]);
    cache.set(key, ring.seq, body, stored?.expiresAtMs ?? 0);
    return body;
  };
}
