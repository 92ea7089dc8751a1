/**
 * A shard's view of the candles LMDB holds, for pools without a ring block (apply.ts StoredCandles):
 * the newest ones of a pool and interval, placed in ring slots exactly where the ring kept them.
 */
import { storedCandles } from '../store/candles.js';
import type { Store } from '../store/store.js';
import type { CandleRing } from '../state/views.js';
import { createLeavingCandle, type LeavingCandle, type StoredCandles } from '../state/windows.js';
import { CANDLE_FIELDS } from '../store/candles.js';

/** Candles that left a shard's rings and are not on disk yet (lmdb-sink.ts). */
export interface UnstoredCandles {
  unstoredCandles(pool: number, interval: number, from: number, to: number, out: number[]): void;
}

export class LmdbCandles implements StoredCandles {
  private readonly candle: LeavingCandle = createLeavingCandle();
  private readonly extra: number[] = [];

  /** With `unstored` (the shard's own sink), candles still on their way to the store are found too. */
  constructor(
    private readonly store: Store,
    private readonly unstored: UnstoredCandles | null = null,
  ) {}

  minutes(pool: number, from: number, to: number, visit: (c: LeavingCandle) => boolean): void {
    if (to <= from) return;
    const c = this.candle;
    const extra = this.extra;
    extra.length = 0;
    this.unstored?.unstoredCandles(pool, 0, from, to, extra);
    // Candles waiting for the store, oldest first; the store's own merge with them (they are newer where both have one).
    const waiting: number[] = [];
    for (let at = 0; at < extra.length; at += CANDLE_FIELDS) waiting.push(at);
    waiting.sort((a, b) => extra[a]! - extra[b]!);
    let w = 0;
    const fill = (at: number) => {
      c.time = extra[at]!;
      c.close0 = extra[at + 4]!;
      c.close1 = extra[at + 8]!;
      c.volumeUsd = extra[at + 9]!;
      c.buyVolumeUsd = extra[at + 10]!;
      c.txns = extra[at + 11]!;
      c.buys = extra[at + 12]!;
    };
    for (const { time, record } of storedCandles(this.store, pool, 0, from, to - 1)) {
      while (w < waiting.length && extra[waiting[w]!]! <= time) {
        const at = waiting[w++]!;
        const same = extra[at] === time;
        fill(at);
        if (!visit(c)) return;
        if (same) continue;
      }
      if (w > 0 && extra[waiting[w - 1]!] === time) continue;
      c.time = time;
      c.close0 = record[3]!;
      c.close1 = record[7]!;
      c.volumeUsd = record[8]!;
      c.buyVolumeUsd = record[9]!;
      c.txns = record[10]!;
      c.buys = record[11]!;
      if (!visit(c)) return;
    }
    while (w < waiting.length) {
      fill(waiting[w++]!);
      if (!visit(c)) return;
    }
  }

  loadNewest(pool: number, interval: number, count: number, opened: number, upTo: number, r: CandleRing, row: number): number {
    const R = r.slots;
    let got = 0;
    for (const { time, record } of storedCandles(this.store, pool, interval, 0, upTo, true)) {
      if (got >= count) break;
      const slot = row * R + ((opened - 1 - got) % R);
      r.time[slot] = time;
      r.open0[slot] = record[0]!;
      r.high0[slot] = record[1]!;
      r.low0[slot] = record[2]!;
      r.close0[slot] = record[3]!;
      r.open1[slot] = record[4]!;
      r.high1[slot] = record[5]!;
      r.low1[slot] = record[6]!;
      r.close1[slot] = record[7]!;
      r.volumeUsd[slot] = record[8]!;
      r.buyVolumeUsd[slot] = record[9]!;
      r.txns[slot] = record[10]!;
      r.buys[slot] = record[11]!;
      got++;
    }
    return got;
  }
}
