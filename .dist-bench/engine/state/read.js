/**
 * Consistent readers over the seqlocks of the shared views (see views.ts): each copies what it
 * needs into an output object the caller owns and reuses, retrying while the version word is odd
 * or changed under the copy. Readers never write shared memory and allocate nothing per call.
 *
 * A writer holds a lock for about a microsecond, but may update one hot pool many times in a row;
 * a reader keeps retrying for up to READ_TIMEOUT_MS and then gives up (returns false), so a writer
 * that died inside an update cannot hang the reading thread.
 */
import { INTERVALS, INTERVAL_SECONDS, RING_SLOTS, WINDOWS, WINDOW_BASES, WINDOW_COUNT } from './layout.js';
/** Time after which a read that never saw a stable version is abandoned. */
export const READ_TIMEOUT_MS = 20;
/** Attempts between two looks at the clock, minus one (an odd-version spin is ~10 ns, a copy ~0.2 µs). */
const CLOCK_CHECK_MASK = 1023;
/** The read's deadline (ms, performance clock), set at the first look; -1 once it has passed. */
function nextDeadline(deadline) {
    const now = performance.now();
    if (deadline === 0)
        return now + READ_TIMEOUT_MS;
    return now > deadline ? -1 : deadline;
}
/**
 * Runs copy(views, i, out) until one run fell between two reads of seqs[i] that saw the same even
 * version; returns that version, or -1 when none did within READ_TIMEOUT_MS.
 */
export function readStable(seqs, views, i, out, copy) {
    let deadline = 0;
    for (let attempt = 0;; attempt++) {
        if ((attempt & CLOCK_CHECK_MASK) === CLOCK_CHECK_MASK && (deadline = nextDeadline(deadline)) < 0)
            return -1;
        const s = Atomics.load(seqs, i);
        if ((s & 1) !== 0)
            continue;
        copy(views, i, out);
        if (Atomics.load(seqs, i) === s)
            return s;
    }
}
/** Longest candle ring of any interval: the capacity a RingCandles needs. */
export const MAX_RING_SLOTS = Math.max(...RING_SLOTS);
export function createPoolState() {
    return {
        seq: 0,
        lastEventTime: 0,
        lastSwapTime: 0,
        ratio: 0,
        priceUsd0: 0,
        priceUsd1: 0,
        reserve0: 0,
        reserve1: 0,
        reserveRaw: new Uint32Array(8),
        prevReserveRaw: new Uint32Array(8),
        reserveBlock: 0,
        reserveTime: 0,
        syncBlock: 0,
        syncTx: 0,
        liquidityUsd: 0,
        txnsTotal: 0,
        winVolumeUsd: new Float64Array(WINDOW_COUNT),
        winBuyVolumeUsd: new Float64Array(WINDOW_COUNT),
        winTxns: new Float64Array(WINDOW_COUNT),
        winBuys: new Float64Array(WINDOW_COUNT),
        winPriceChange: new Float64Array(WINDOW_COUNT),
        winRefPrice: new Float64Array(WINDOW_COUNT),
        winPriceChange1: new Float64Array(WINDOW_COUNT),
        winAsOf: new Float64Array(WINDOW_BASES.length),
    };
}
/**
 * Copies pool p's dynamic state into `out`. With `token1Changes`, also derives token 1's price
 * change per window from the base rings (the rule of layout.ts, as the writer applies it to token 0:
 * reference = close of the newest retained base candle opened before the window, else the open of
 * the oldest candle in it; latest = priceUsd1). Returns false when no consistent copy was obtained.
 */
/** Figures of a pool search row, in ROW order. */
export const ROW = {
    volumeUsd24h: 0,
    volumeUsd7d: 1,
    volumeUsd30d: 2,
    liquidityUsd: 3,
    priceUsd: 4,
    txns24h: 5,
    priceChange24h: 6,
    priceChange48h: 7,
    priceChange6h: 8,
    priceChange1h: 9,
    priceChange5m: 10,
};
export const ROW_LENGTH = 11;
function copyRow(v, p, out) {
    out[ROW.volumeUsd24h] = v.winVolumeUsd[5 /* Win.H24 */][p];
    out[ROW.volumeUsd7d] = v.winVolumeUsd[7 /* Win.D7 */][p];
    out[ROW.volumeUsd30d] = v.winVolumeUsd[8 /* Win.D30 */][p];
    out[ROW.liquidityUsd] = v.liquidityUsd[p];
    out[ROW.priceUsd] = v.priceUsd0[p];
    out[ROW.txns24h] = v.winTxns[5 /* Win.H24 */][p];
    out[ROW.priceChange24h] = v.winPriceChange[5 /* Win.H24 */][p];
    out[ROW.priceChange48h] = v.winPriceChange[6 /* Win.H48 */][p];
    out[ROW.priceChange6h] = v.winPriceChange[4 /* Win.H6 */][p];
    out[ROW.priceChange1h] = v.winPriceChange[3 /* Win.H1 */][p];
    out[ROW.priceChange5m] = v.winPriceChange[0 /* Win.M5 */][p];
}
/** The figures of a search row of pool p (ROW order, ROW_LENGTH long), consistently: returns their version, -1 as readPool's false. */
export function readPoolRow(views, p, out) {
    return readStable(views.poolSeq, views, p, out, copyRow);
}
export function readPool(views, p, out, token1Changes = false) {
    const s = readStable(views.poolSeq, views, p, out, token1Changes ? copyPoolWithToken1 : copyPool);
    if (s < 0)
        return false;
    out.seq = s;
    return true;
}
function copyPoolWithToken1(v, p, out) {
    copyPool(v, p, out);
    token1PriceChanges(v, p, out);
}
function copyPool(v, p, out) {
    out.lastEventTime = v.lastEventTime[p];
    out.lastSwapTime = v.lastSwapTime[p];
    out.ratio = v.ratio[p];
    out.priceUsd0 = v.priceUsd0[p];
    out.priceUsd1 = v.priceUsd1[p];
    out.reserve0 = v.reserve0[p];
    out.reserve1 = v.reserve1[p];
    const o = p * 8;
    for (let k = 0; k < 8; k++) {
        out.reserveRaw[k] = v.reserveRaw[o + k];
        out.prevReserveRaw[k] = v.prevReserveRaw[o + k];
    }
    out.reserveBlock = v.reserveBlock[p];
    out.reserveTime = v.reserveTime[p];
    out.syncBlock = v.syncBlock[p];
    out.syncTx = v.syncTx[p];
    out.liquidityUsd = v.liquidityUsd[p];
    out.txnsTotal = v.txnsTotal[p];
    for (let w = 0; w < WINDOW_COUNT; w++) {
        out.winVolumeUsd[w] = v.winVolumeUsd[w][p];
        out.winBuyVolumeUsd[w] = v.winBuyVolumeUsd[w][p];
        out.winTxns[w] = v.winTxns[w][p];
        out.winBuys[w] = v.winBuys[w][p];
        out.winPriceChange[w] = v.winPriceChange[w][p];
        out.winRefPrice[w] = v.winRefPrice[w][p];
    }
    for (let b = 0; b < WINDOW_BASES.length; b++)
        out.winAsOf[b] = v.winAsOf[b][p];
}
/**
 * Token 1's reference price of window w (on base `b`) as of base candle `current`, from ring `r` row
 * `row` holding the newest min(n, slots) of n candles: the close of the newest candle opened before
 * the window, else the open of the oldest in it (the rule ShardWriter.resumWindows applies to token 0).
 */
export function token1Ref(r, row, n, current, w) {
    const R = r.slots;
    const kept = n < R ? n : R;
    const start = current - (WINDOWS[w].buckets - 1) * r.seconds;
    let ref = 0;
    for (let k = 0; k < kept; k++) {
        const slot = row * R + ((n - 1 - k) % R);
        const time = r.time[slot];
        if (time < start)
            return r.close1[slot];
        if (time <= current)
            ref = r.open1[slot];
    }
    return ref;
}
/** Stores token 1's reference prices of the windows on base `b` into `refs` at pool p (a pool giving its ring block back, or re-summed without one). */
export function token1Refs(r, row, n, current, b, refs, p) {
    const windows = WINDOW_BASES[b].windows;
    for (let j = 0; j < windows.length; j++)
        refs[windows[j]][p] = token1Ref(r, row, n, current, windows[j]);
}
/**
 * Token 1's price change per window, as of the base candles the token-0 figures are as of: from the
 * pool's rings while it holds a ring block, else from the references stored when it gave it back
 * (its candles have not changed since).
 */
function token1PriceChanges(v, p, out) {
    const latest = out.priceUsd1;
    const block = v.poolBlock[p] - 1;
    for (let b = 0; b < WINDOW_BASES.length; b++) {
        const { base, windows } = WINDOW_BASES[b];
        const r = v.rings[base];
        const n = r.opened[p];
        const current = out.winAsOf[b];
        for (let j = 0; j < windows.length; j++) {
            const w = windows[j];
            const ref = block >= 0 ? token1Ref(r, block, n, current, w) : v.winRefPrice1[w][p];
            out.winPriceChange1[w] = ref > 0 ? (latest / ref - 1) * 100 : 0;
        }
    }
}
/** Private one-row candle rings, one per interval, in the shape of the shared ones (a quiet pool's stored candles, re-summed). */
export function createScratchRings() {
    return INTERVALS.map((_, i) => {
        const slots = RING_SLOTS[i];
        const f = () => new Float64Array(slots);
        const u = () => new Uint32Array(slots);
        return {
            seconds: INTERVAL_SECONDS[i],
            slots,
            opened: new Uint32Array(1),
            time: u(),
            open0: f(),
            high0: f(),
            low0: f(),
            close0: f(),
            open1: f(),
            high1: f(),
            low1: f(),
            close1: f(),
            volumeUsd: f(),
            buyVolumeUsd: f(),
            txns: u(),
            buys: u(),
        };
    });
}
export function createTokenPriceState() {
    return { seq: 0, priceUsd: 0, routeLiquidityUsd: 0, routePool: 0, routeClass: 0, priceTime: 0 };
}
/** Copies token t's price fields into `out`; false when no consistent copy was obtained. */
export function readTokenPrice(views, t, out) {
    const s = readStable(views.tokenSeq, views, t, out, copyTokenPrice);
    if (s < 0)
        return false;
    out.seq = s;
    return true;
}
function copyTokenPrice(v, t, out) {
    out.priceUsd = v.tokenPriceUsd[t];
    out.routeLiquidityUsd = v.tokenRouteLiquidityUsd[t];
    out.routePool = v.tokenRoutePool[t];
    out.routeClass = v.tokenRouteClass[t];
    out.priceTime = v.tokenPriceTime[t];
}
export function createRingCandles() {
    const a = () => new Float64Array(MAX_RING_SLOTS);
    return {
        seq: 0,
        interval: 0,
        fromTime: 0,
        toTime: 0,
        count: 0,
        opened: 0,
        slots: 0,
        oldestTime: 0,
        time: a(),
        open0: a(),
        high0: a(),
        low0: a(),
        close0: a(),
        open1: a(),
        high1: a(),
        low1: a(),
        close1: a(),
        volumeUsd: a(),
        buyVolumeUsd: a(),
        txns: a(),
        buys: a(),
    };
}
/**
 * Copies the candles of pool p and interval `intervalIndex` whose open time is in
 * [fromTime, toTime] into `out`, oldest first, with the ring's retention facts.
 * Returns false when no consistent copy was obtained.
 */
export function readRing(views, p, intervalIndex, fromTime, toTime, out) {
    if (views.rings[intervalIndex] === undefined)
        throw new RangeError(`interval index ${intervalIndex} out of range`);
    out.interval = intervalIndex;
    out.fromTime = fromTime;
    out.toTime = toTime;
    const s = readStable(views.poolSeq, views, p, out, copyRing);
    if (s < 0)
        return false;
    out.seq = s;
    return true;
}
/** oldestTime of a ring that holds nothing in memory: every candle is older (in LMDB). */
export const RING_NONE = 2 ** 32;
function copyRing(v, p, out) {
    const r = v.rings[out.interval];
    const R = r.slots;
    const n = r.opened[p];
    const row = v.poolBlock[p] - 1;
    out.opened = n;
    out.slots = R;
    if (row < 0) {
        out.count = 0;
        out.oldestTime = n > 0 ? RING_NONE : 0;
        return;
    }
    const first = n > R ? n - R : 0;
    let count = 0;
    for (let k = first; k < n; k++) {
        const slot = row * R + (k % R);
        const time = r.time[slot];
        if (time < out.fromTime)
            continue;
        if (time > out.toTime)
            break;
        out.time[count] = time;
        out.open0[count] = r.open0[slot];
        out.high0[count] = r.high0[slot];
        out.low0[count] = r.low0[slot];
        out.close0[count] = r.close0[slot];
        out.open1[count] = r.open1[slot];
        out.high1[count] = r.high1[slot];
        out.low1[count] = r.low1[slot];
        out.close1[count] = r.close1[slot];
        out.volumeUsd[count] = r.volumeUsd[slot];
        out.buyVolumeUsd[count] = r.buyVolumeUsd[slot];
        out.txns[count] = r.txns[slot];
        out.buys[count] = r.buys[slot];
        count++;
    }
    out.count = count;
    out.oldestTime = n > 0 ? r.time[row * R + (first % R)] : 0;
}
//# sourceMappingURL=read.js.map