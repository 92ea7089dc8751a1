/**
 * A shard's view of the candles LMDB holds, for pools without a ring block (apply.ts StoredCandles):
 * the newest ones of a pool and interval, placed in ring slots exactly where the ring kept them.
 */
import { storedCandles } from '../store/candles.js';
/** Later than any candle's open time (u32 seconds). */
const NEVER = 2 ** 32;
export class LmdbCandles {
    store;
    constructor(store) {
        this.store = store;
    }
    loadNewest(pool, interval, count, opened, r, row) {
        const R = r.slots;
        let got = 0;
        for (const { time, record } of storedCandles(this.store, pool, interval, 0, NEVER, true)) {
            if (got >= count)
                break;
            const slot = row * R + ((opened - 1 - got) % R);
            r.time[slot] = time;
            r.open0[slot] = record[0];
            r.high0[slot] = record[1];
            r.low0[slot] = record[2];
            r.close0[slot] = record[3];
            r.open1[slot] = record[4];
            r.high1[slot] = record[5];
            r.low1[slot] = record[6];
            r.close1[slot] = record[7];
            r.volumeUsd[slot] = record[8];
            r.buyVolumeUsd[slot] = record[9];
            r.txns[slot] = record[10];
            r.buys[slot] = record[11];
            got++;
        }
        return got;
    }
}
//# sourceMappingURL=stored-candles.js.map