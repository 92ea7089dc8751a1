/**
 * A pool's candles over a range, wherever they are: the newest in the pool's shared ring (while it
 * holds a ring block), older sealed ones in LMDB. The two are joined at the ring's oldest retained
 * candle, so none appears twice, and this is the one place that joins them.
 *
 * A read is two steps so that a caller can cache the stored part apart from the ring part (candles
 * below a ring are closed and never change; a quiet pool's newest stored ones change only when it
 * trades again: storedVersion): open() copies the ring and decides how many candles each side gives,
 * then readStored() emits the stored ones and emitRing() the ring ones, oldest first.
 */
import { createRingCandles, type RingCandles } from '../state/read.js';
import type { StoredCandle } from '../store/candles.js';
import type { EngineReader } from './reader.js';

/** Receives candles oldest first: token 0's OHLC, token 1's OHLC (USD), then USD volume. */
export interface CandleSink {
  candle(time: number, open0: number, high0: number, low0: number, close0: number, open1: number, high1: number, low1: number, close1: number, volumeUsd: number): void;
}

/** Reads one pool's candles at a time; one per caller (it owns a ring copy buffer). */
export class PoolCandles {
  private readonly read: EngineReader;
  private readonly ring: RingCandles = createRingCandles();
  private readonly found: StoredCandle[] = [];
  private pool = 0;
  private interval = 0;
  private from = 0;
  private want = 0;
  private backward = false;
  private ringFirst = 0;
  /** Open time of the newest candle the store part may hold (below the ring's oldest); -1: none. */
  storeTo = -1;
  /** Candles the store part gives at most (0: the store is not read). */
  storeWant = 0;
  /**
   * Whether the store part may still gain candles: the ring has let candles go that may be on
   * their way to LMDB, and no version word moves when they land.
   */
  storeMayGrow = false;
  /** The pool's version the ring was copied at. */
  version = 0;
  /**
   * What the stored part depends on besides the range: 0 for a pool holding a ring block (it is
   * below the ring: closed candles), the pool's version for one without (its newest stored candles
   * may be open ones it handed over, and they change when it trades again: shards/tiers.ts).
   */
  storedVersion = 0;

  constructor(read: EngineReader) {
    this.read = read;
  }

  /**
   * Prepares a read of up to `want` candles of pool p and interval index `interval` opening in
   * [from, to]: the first ones, or the last ones when `backward`. Copies the ring now.
   */
  open(p: number, interval: number, from: number, to: number, want: number, backward: boolean): void {
    const ring = this.ring;
    if (!this.read.readRing(p, interval, from, to, ring)) throw new Error(`pool ${p} candles did not settle`);
    this.pool = p;
    this.interval = interval;
    this.from = from;
    this.want = want;
    this.backward = backward;
    this.version = ring.seq;
    // Older candles are in LMDB when the range starts below the ring's oldest retained candle.
    this.storeTo = ring.oldestTime === 0 ? -1 : Math.min(to, ring.oldestTime - 1);
    // A ring that let candles go, or a pool without a ring block (every candle in LMDB).
    const quiet = ring.opened === 0 && ring.oldestTime !== 0;
    this.storeMayGrow = ring.opened > ring.slots || quiet;
    this.storedVersion = quiet ? ring.seq : 0;
    const storeInRange = this.storeTo >= from && want > 0;
    if (backward) {
      const fromRing = Math.min(want, ring.count);
      this.ringFirst = ring.count - fromRing;
      this.storeWant = storeInRange && fromRing < want ? want - fromRing : 0;
    } else {
      this.ringFirst = 0;
      this.storeWant = storeInRange ? want : 0;
    }
  }

  /** Emits the store part (up to storeWant candles, the first or the last of it), oldest first; returns how many. */
  readStored(sink: CandleSink): number {
    if (this.storeWant === 0) return 0;
    const found = this.found;
    found.length = 0;
    for (const c of this.read.sealedCandles(this.pool, this.interval, this.from, this.storeTo, this.backward)) {
      found.push(c);
      if (found.length >= this.storeWant) break;
    }
    if (this.backward) found.reverse();
    // The record's field order: engine/store/candles.ts (token 0's OHLC, token 1's OHLC, USD volume).
    for (const { time, record: r } of found) sink.candle(time, r[0]!, r[1]!, r[2]!, r[3]!, r[4]!, r[5]!, r[6]!, r[7]!, r[8]!);
    const n = found.length;
    found.length = 0;
    return n;
  }

  /** Emits the ring part, oldest first, given that `stored` candles came from the store; returns how many. */
  emitRing(stored: number, sink: CandleSink): number {
    const r = this.ring;
    const last = this.backward ? r.count : Math.min(r.count, Math.max(0, this.want - stored));
    for (let k = this.ringFirst; k < last; k++) {
      sink.candle(r.time[k]!, r.open0[k]!, r.high0[k]!, r.low0[k]!, r.close0[k]!, r.open1[k]!, r.high1[k]!, r.low1[k]!, r.close1[k]!, r.volumeUsd[k]!);
    }
    return Math.max(0, last - this.ringFirst);
  }

  /** Both parts in one go: up to `want` candles, oldest first (open() then readStored() then emitRing()). */
  readAll(p: number, interval: number, from: number, to: number, want: number, backward: boolean, sink: CandleSink): number {
    if (to < from || want <= 0) return 0;
    this.open(p, interval, from, to, want, backward);
    const stored = this.readStored(sink);
    return stored + this.emitRing(stored, sink);
  }
}
