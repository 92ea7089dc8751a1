/**
 * Shapes of the shared-memory views: candle intervals, ring lengths and rolling windows.
 *
 * Rolling window W over base interval B: the sum over candles of interval B whose open time is
 * >= floor(now / B) * B - W + B, i.e. the current (partial) B-candle and the W/B - 1 before it.
 * Its price change compares the latest price with a reference price: the close of the last
 * B-candle opened before the window, or, when there is none, the open of the first candle in it.
 */
export const INTERVALS = ['1m', '5m', '10m', '15m', '30m', '1h', '6h', '12h', '24h'];
export const INTERVAL_SECONDS = [60, 300, 600, 900, 1800, 3600, 21_600, 43_200, 86_400];
/**
 * Candles kept in shared memory per pool and interval. Older sealed candles live in LMDB.
 * A ring must hold the longest window built on it plus a few older candles for the reference price.
 */
export const RING_SLOTS = [8, 16, 4, 4, 4, 64, 32, 4, 32];
export const WINDOWS = [
    { name: '5m', seconds: 300, base: 0 /* Iv.M1 */, buckets: 5 },
    { name: '15m', seconds: 900, base: 1 /* Iv.M5 */, buckets: 3 },
    { name: '30m', seconds: 1800, base: 1 /* Iv.M5 */, buckets: 6 },
    { name: '1h', seconds: 3600, base: 1 /* Iv.M5 */, buckets: 12 },
    { name: '6h', seconds: 21_600, base: 5 /* Iv.H1 */, buckets: 6 },
    { name: '24h', seconds: 86_400, base: 5 /* Iv.H1 */, buckets: 24 },
    { name: '48h', seconds: 172_800, base: 5 /* Iv.H1 */, buckets: 48 },
    { name: '7d', seconds: 604_800, base: 6 /* Iv.H6 */, buckets: 28 },
    { name: '30d', seconds: 2_592_000, base: 8 /* Iv.H24 */, buckets: 30 },
];
export const WINDOW_COUNT = WINDOWS.length;
/** Base intervals that some window is built on, each with the windows built on it. */
export const WINDOW_BASES = (() => {
    const bases = [...new Set(WINDOWS.map((w) => w.base))].sort((a, b) => a - b);
    return bases.map((base) => ({ base, windows: WINDOWS.flatMap((w, i) => (w.base === base ? [i] : [])) }));
})();
for (const w of WINDOWS) {
    if (w.buckets * INTERVAL_SECONDS[w.base] !== w.seconds)
        throw new Error(`window ${w.name} does not tile its base interval`);
    if (RING_SLOTS[w.base] < w.buckets + 1)
        throw new Error(`ring of ${INTERVALS[w.base]} is too short for window ${w.name}`);
}
export function intervalIndex(name) {
    return INTERVALS.indexOf(name);
}
/** Seconds of the 1 s token candle rings kept per token (the stream reads sealed ones). */
export const TOKEN_SECOND_SLOTS = 8;
//# sourceMappingURL=layout.js.map