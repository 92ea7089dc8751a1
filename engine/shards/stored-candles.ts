/**
 * A shard's view of the candles LMDB holds, for pools without a ring block (apply.ts StoredCandles):
 * the newest ones of a pool and interval, placed in ring slots exactly where the ring kept them.
 */
import { storedCandles } from '../store/candles.js';
import { parkedAt } from '../store/parked.js';
import type { Store } from '../store/store.js';
import type { CandleRing } from '../state/views.js';
import { RING_FIELDS, setCandleValue } from '../state/candle-record.js';
import { createLeavingCandle, type LeavingCandle, type StoredCandles } from '../state/windows.js';
import { CANDLE_FIELDS, CANDLES_PER_CHUNK, chunkStart, leavingCandleAt } from '../store/candles.js';

/** Candles that left a shard's rings and are not on disk yet (lmdb-sink.ts), and word of those written since. */
export interface UnstoredCandles {
  unstoredCandles(pool: number, interval: number, from: number, to: number, out: number[]): void;
  /** The first of those of interval 0 (1m) into `out`, its open time; Infinity when there is none. */
  firstUnstoredMinute(pool: number, from: number, to: number, out: LeavingCandle): number;
  /** Calls `fn` with the key of every chunk the shard writes to the store from now on. */
  onWritten(fn: (pool: number, interval: number, start: number) => void): void;
}

/** A one-minute chunk's cache key: pool and chunk number (starts are multiples of the chunk span, below 2^32 s). */
function chunkKey(pool: number, start: number): number {
  return pool * 2 ** 21 + start / (CANDLES_PER_CHUNK * 60);
}

/** One-minute chunks a shard keeps decoded (about 7 KiB each). */
const CHUNK_CACHE_SIZE = 1024;

export class LmdbCandles implements StoredCandles {
  private readonly candle: LeavingCandle = createLeavingCandle();
  private readonly extra: number[] = [];
  /**
   * A shard's decoded one-minute chunks by pool and start (null: none stored). Only the shard writes
   * its pools' chunks, and it drops each it writes (onWritten) and all of them when pools are rolled
   * back (forgetAll), so a cached chunk is what the store holds. Readers of other threads keep none.
   */
  private readonly cache: Map<number, readonly number[] | null> | null;

  /** With `unstored` (the shard's own sink), candles still on their way to the store are found too. */
  constructor(
    private readonly store: Store,
    private readonly unstored: UnstoredCandles | null = null,
  ) {
    this.cache = unstored === null ? null : new Map();
    unstored?.onWritten((pool, interval, start) => {
      if (interval === 0) this.cache!.delete(chunkKey(pool, start));
    });
  }

  /** Drops every cached chunk (the store's candles of some pools were cut: a rollback). */
  forgetAll(): void {
    this.cache?.clear();
  }

  private minuteChunk(pool: number, start: number): readonly number[] | null {
    const cache = this.cache;
    if (cache === null) return this.store.candles.get([pool, 0, start]) ?? null;
    const key = chunkKey(pool, start);
    let chunk = cache.get(key);
    if (chunk === undefined) {
      chunk = this.store.candles.get([pool, 0, start]) ?? null;
      if (cache.size >= CHUNK_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(key, chunk);
    }
    return chunk;
  }

  firstMinute(pool: number, from: number, to: number, out: LeavingCandle): boolean {
    if (to <= from) return false;
    // A candle waiting for the store is newer than the store's at the same time.
    const waiting = this.unstored === null ? Infinity : this.unstored.firstUnstoredMinute(pool, from, to, out);
    const end = waiting < to ? waiting : to;
    const span = CANDLES_PER_CHUNK * 60;
    for (let start = chunkStart(0, from); start < end; start += span) {
      const chunk = this.minuteChunk(pool, start);
      if (chunk === null) continue;
      for (let at = 0; at < chunk.length; at += CANDLE_FIELDS) {
        const time = chunk[at]!;
        if (time < from) continue;
        if (time >= end) break;
        leavingCandleAt(chunk, at, out);
        return true;
      }
    }
    return waiting !== Infinity;
  }

  minutes(pool: number, from: number, to: number, visit: (c: LeavingCandle) => boolean): void {
    if (to <= from) return;
    const c = this.candle;
    const extra = this.extra;
    extra.length = 0;
    this.unstored?.unstoredCandles(pool, 0, from, to, extra);
    // Candles waiting for the store, oldest first, merged with the store's (they are newer where both have one).
    let waiting: number[] | null = null;
    if (extra.length > 0) {
      waiting = [];
      for (let at = 0; at < extra.length; at += CANDLE_FIELDS) waiting.push(at);
      waiting.sort((a, b) => extra[a]! - extra[b]!);
    }
    let w = 0;
    const visitWaiting = (at: number) => {
      leavingCandleAt(extra, at, c);
      return visit(c);
    };
    const span = CANDLES_PER_CHUNK * 60;
    for (let start = chunkStart(0, from); start < to; start += span) {
      const chunk = this.minuteChunk(pool, start);
      if (chunk === null) continue;
      // One-minute candles are never stored as references (candles.ts): the fields are the candle's.
      for (let at = 0; at < chunk.length; at += CANDLE_FIELDS) {
        const time = chunk[at]!;
        if (time < from) continue;
        if (time >= to) break;
        let replaced = false;
        while (waiting !== null && w < waiting.length && extra[waiting[w]!]! <= time) {
          const wat = waiting[w++]!;
          if (extra[wat] === time) replaced = true;
          if (!visitWaiting(wat)) return;
        }
        if (replaced) continue;
        leavingCandleAt(chunk, at, c);
        if (!visit(c)) return;
      }
    }
    while (waiting !== null && w < waiting.length) if (!visitWaiting(waiting[w++]!)) return;
  }

  parked(pool: number, swaps: number): readonly number[] | undefined {
    return parkedAt(this.store, pool, swaps);
  }

  loadNewest(pool: number, interval: number, count: number, opened: number, upTo: number, r: CandleRing, row: number): number {
    const R = r.slots;
    let got = 0;
    for (const { time, record } of storedCandles(this.store, pool, interval, 0, upTo, true)) {
      if (got >= count) break;
      const slot = row * R + ((opened - 1 - got) % R);
      setCandleValue(r, slot, RING_FIELDS[0]!, time);
      // The stored record holds the fields after the open time, in the same order.
      for (let k = 1; k < RING_FIELDS.length; k++) setCandleValue(r, slot, RING_FIELDS[k]!, record[k - 1]!);
      got++;
    }
    return got;
  }
}
