/**
 * Candle reading shared by the history endpoints: a pool's candles of one interval from the
 * shared-memory ring joined with the sealed ones in LMDB (at the ring's oldest retained candle,
 * so none appears twice), the OHLCV range rules, and the JSON candle shape of pool OHLCV.
 */
import { applyPlanWindow } from './plan-window.js';
import { INTERVAL_SECONDS, intervalIndex } from '../../engine/state/layout.js';
import { createRingCandles, readRing } from '../../engine/state/read.js';
import { storedCandles } from '../../engine/store/candles.js';
import { invalidParameter } from '../errors.js';
import { num } from '../http/json.js';
import { resolveTime, rfc3339 } from '../http/time.js';
function resolveOrReject(spec, now, param) {
    const t = resolveTime(spec, now);
    if (Number.isNaN(t))
        throw invalidParameter(param, 'is out of range');
    return t;
}
/**
 * The range rules of pool OHLCV: start required, end defaults to now, count_back counts back from
 * end; with a plan `gate`, its finest interval and history window (plan-window.ts).
 */
export function candleRange(q, nowSeconds, gate, rawQuery = '') {
    const now = Math.floor(nowSeconds);
    const asked = resolveOrReject(q.start, now, 'start');
    const end = q.end === undefined ? now : resolveOrReject(q.end, now, 'end');
    if (end < asked)
        throw invalidParameter('end', 'must not be before start');
    const windowed = applyPlanWindow(gate, rawQuery, q.interval, asked, end, now);
    const start = windowed.start;
    const interval = intervalIndex(windowed.interval);
    const seconds = INTERVAL_SECONDS[interval];
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
function ringCandle(r, k) {
    return {
        time: r.time[k],
        open0: r.open0[k],
        high0: r.high0[k],
        low0: r.low0[k],
        close0: r.close0[k],
        open1: r.open1[k],
        high1: r.high1[k],
        low1: r.low1[k],
        close1: r.close1[k],
        volumeUsd: r.volumeUsd[k],
    };
}
/** Reads pool candles; one per caller (it owns a ring copy buffer). */
export class PoolCandleReader {
    ctx;
    ring = createRingCandles();
    constructor(ctx) {
        this.ctx = ctx;
    }
    /**
     * Up to `want` candles of pool p and `interval` opening in [from, to], oldest first: the first
     * ones, or the last ones when `backward`.
     */
    read(p, interval, from, to, want, backward) {
        if (to < from || want <= 0)
            return [];
        const ring = this.ring;
        if (!readRing(this.ctx.views, p, interval, from, to, ring))
            throw new Error(`pool ${p} candles did not settle`);
        // Older candles are in LMDB when the range starts below the ring's oldest retained candle.
        const storeTo = ring.opened === 0 ? -1 : Math.min(to, ring.oldestTime - 1);
        const recent = [];
        for (let k = 0; k < ring.count; k++)
            recent.push(ringCandle(ring, k));
        if (backward) {
            if (recent.length >= want)
                return recent.slice(recent.length - want);
            const older = [];
            if (storeTo >= from) {
                for (const c of storedCandles(this.ctx.store, p, interval, from, storeTo, true)) {
                    older.push(recordCandle(c.time, c.record));
                    if (older.length + recent.length >= want)
                        break;
                }
            }
            return older.reverse().concat(recent);
        }
        const out = [];
        if (storeTo >= from) {
            for (const c of storedCandles(this.ctx.store, p, interval, from, storeTo, false)) {
                if (out.length >= want)
                    break;
                out.push(recordCandle(c.time, c.record));
            }
        }
        for (const c of recent) {
            if (out.length >= want)
                break;
            out.push(c);
        }
        return out;
    }
    /** The candles a CandleRange selects. */
    readRange(p, r) {
        return this.read(p, r.interval, r.from, r.to, r.want, r.backward);
    }
}
function recordCandle(time, rec) {
    return {
        time,
        open0: rec[0],
        high0: rec[1],
        low0: rec[2],
        close0: rec[3],
        open1: rec[4],
        high1: rec[5],
        low1: rec[6],
        close1: rec[7],
        volumeUsd: rec[8],
    };
}
/** The side of a pool candle: token 0's prices, or token 1's. */
export function side(c, token1) {
    return token1
        ? { time: c.time, open: c.open1, high: c.high1, low: c.low1, close: c.close1, volume: c.volumeUsd }
        : { time: c.time, open: c.open0, high: c.high0, low: c.low0, close: c.close0, volume: c.volumeUsd };
}
/** The JSON candle of pool OHLCV: timestamp, time_open, time_close, open, high, low, close, volume. */
export function candleJson(c, seconds) {
    const open = rfc3339(c.time);
    return (`{"timestamp":"${open}","time_open":"${open}","time_close":"${rfc3339(c.time + seconds)}"` +
        `,"open":${num(c.open)},"high":${num(c.high)},"low":${num(c.low)},"close":${num(c.close)},"volume":${num(c.volume)}}`);
}
//# sourceMappingURL=candles.js.map