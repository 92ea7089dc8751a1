/**
 * Sealed candles in LMDB, stored in chunks: key [pool, interval, chunk start] holds the candles of
 * that pool and interval opening in [chunk start, chunk start + CANDLES_PER_CHUNK intervals), in
 * time order, as a flat array of CANDLE_FIELDS numbers per candle: open time, then CandleRecord.
 * One entry per chunk instead of one per candle keeps writes and the file small.
 */
import { INTERVAL_SECONDS } from '../state/layout.js';
export const CANDLES_PER_CHUNK = 64;
/** Numbers per stored candle: open time + the 12 CandleRecord fields. */
export const CANDLE_FIELDS = 13;
/** Open time of the chunk holding a candle of `interval` that opens at `time`. */
export function chunkStart(interval, time) {
    const span = CANDLES_PER_CHUNK * INTERVAL_SECONDS[interval];
    return time - (time % span);
}
/** Union of two chunks by open time; a candle in `added` replaces one with the same time. */
export function mergeChunk(existing, added) {
    if (!existing || existing.length === 0)
        return added.slice();
    const out = [];
    let i = 0;
    let j = 0;
    while (i < existing.length || j < added.length) {
        const te = i < existing.length ? existing[i] : Infinity;
        const ta = j < added.length ? added[j] : Infinity;
        if (ta <= te) {
            for (let k = 0; k < CANDLE_FIELDS; k++)
                out.push(added[j + k]);
            j += CANDLE_FIELDS;
            if (te === ta)
                i += CANDLE_FIELDS;
        }
        else {
            for (let k = 0; k < CANDLE_FIELDS; k++)
                out.push(existing[i + k]);
            i += CANDLE_FIELDS;
        }
    }
    return out;
}
/** Stored candles of pool p and `interval` opening in [from, to], oldest first (newest first with `reverse`). */
export function* storedCandles(store, p, interval, from, to, reverse = false) {
    if (to < from)
        return;
    const first = chunkStart(interval, from);
    const chunks = reverse
        ? store.candles.getRange({ start: [p, interval, to], end: [p, interval, first - 1], reverse: true })
        : store.candles.getRange({ start: [p, interval, first], end: [p, interval, to + 1] });
    for (const { value } of chunks) {
        const n = value.length / CANDLE_FIELDS;
        for (let c = 0; c < n; c++) {
            const at = (reverse ? n - 1 - c : c) * CANDLE_FIELDS;
            const time = value[at];
            if (time < from || time > to)
                continue;
            yield { time, record: value.slice(at + 1, at + CANDLE_FIELDS) };
        }
    }
}
/** Every stored candle as [pool, interval, time] -> record (tools and tests). */
export function* allStoredCandles(store) {
    for (const { key, value } of store.candles.getRange()) {
        for (let at = 0; at < value.length; at += CANDLE_FIELDS)
            yield { key: [key[0], key[1], value[at]], record: value.slice(at + 1, at + CANDLE_FIELDS) };
    }
}
//# sourceMappingURL=candles.js.map