/**
 * A shard's view of the candles LMDB holds, for pools without a ring block (apply.ts StoredCandles):
 * the newest ones of a pool and interval, placed in ring slots exactly where the ring kept them.
 */
import { storedCandles } from '../store/candles.js';
import type { Store } from '../store/store.js';
import type { CandleRing } from '../state/views.js';
import type { StoredCandles } from '../state/windows.js';

export class LmdbCandles implements StoredCandles {
  constructor(private readonly store: Store) {}

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
