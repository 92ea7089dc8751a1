/**
 * Shapes of the shared-memory views: candle intervals, ring lengths and rolling windows.
 *
 * Rolling window W, at one-minute resolution: as of minute m = floor(now / 60) * 60 (now: the chain
 * clock), the sum over the one-minute candles whose open time is in [m - W + 60, m], i.e. the
 * current (partial) minute and the W/60 - 1 whole minutes before it. Its price change compares the
 * latest price with the price exactly one window ago: the close of the newest one-minute candle
 * opened before m - W + 60, or, when there is none, the open of the oldest candle in the window.
 * Each window is kept as candles of its base interval B (below) minus the one-minute candles of the
 * oldest of them that have already left it (state/windows.ts).
 */

export const INTERVALS = ['1m', '5m', '10m', '15m', '30m', '1h', '6h', '12h', '24h'] as const;
export type IntervalName = (typeof INTERVALS)[number];

export const INTERVAL_SECONDS: readonly number[] = [60, 300, 600, 900, 1800, 3600, 21_600, 43_200, 86_400];

/**
 * Candles kept in shared memory per pool and interval. Older sealed candles live in LMDB.
 * A ring must hold the longest window built on it plus a few older candles for the reference price.
 */
export const RING_SLOTS: readonly number[] = [8, 16, 4, 4, 4, 64, 32, 4, 32];

export const enum Iv {
  M1 = 0,
  M5 = 1,
  M10 = 2,
  M15 = 3,
  M30 = 4,
  H1 = 5,
  H6 = 6,
  H12 = 7,
  H24 = 8,
}

export interface WindowSpec {
  readonly name: string;
  readonly seconds: number;
  /** Index into INTERVALS of the candles the window is summed from. */
  readonly base: Iv;
  readonly buckets: number;
}

export const WINDOWS: readonly WindowSpec[] = [
  { name: '5m', seconds: 300, base: Iv.M1, buckets: 5 },
  { name: '15m', seconds: 900, base: Iv.M5, buckets: 3 },
  { name: '30m', seconds: 1800, base: Iv.M5, buckets: 6 },
  { name: '1h', seconds: 3600, base: Iv.M5, buckets: 12 },
  { name: '6h', seconds: 21_600, base: Iv.H1, buckets: 6 },
  { name: '24h', seconds: 86_400, base: Iv.H1, buckets: 24 },
  { name: '48h', seconds: 172_800, base: Iv.H1, buckets: 48 },
  { name: '7d', seconds: 604_800, base: Iv.H6, buckets: 28 },
  { name: '30d', seconds: 2_592_000, base: Iv.H24, buckets: 30 },
];

export const enum Win {
  M5 = 0,
  M15 = 1,
  M30 = 2,
  H1 = 3,
  H6 = 4,
  H24 = 5,
  H48 = 6,
  D7 = 7,
  D30 = 8,
}

export const WINDOW_COUNT = WINDOWS.length;

/** Base intervals that some window is built on, each with the windows built on it. */
export const WINDOW_BASES: readonly { readonly base: Iv; readonly windows: readonly number[] }[] = (() => {
  const bases = [...new Set(WINDOWS.map((w) => w.base))].sort((a, b) => a - b);
  return bases.map((base) => ({ base, windows: WINDOWS.flatMap((w, i) => (w.base === base ? [i] : [])) }));
})();

for (const w of WINDOWS) {
  if (w.buckets * INTERVAL_SECONDS[w.base]! !== w.seconds) throw new Error(`window ${w.name} does not tile its base interval`);
  // The window's base candles (up to buckets + 1: the oldest partly left) and the one before it (the reference).
  if (RING_SLOTS[w.base]! < w.buckets + 2) throw new Error(`ring of ${INTERVALS[w.base]} is too short for window ${w.name}`);
}

export function intervalIndex(name: string): number {
  return (INTERVALS as readonly string[]).indexOf(name);
}

/** Seconds of the 1 s token candle rings kept per token (the stream reads sealed ones). */
export const TOKEN_SECOND_SLOTS = 8;
