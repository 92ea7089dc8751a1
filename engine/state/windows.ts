/**
 * Rolling windows summed from candles: the one implementation the shard writer re-sums a pool's
 * windows with (from its ring block, or from its stored candles when it has none) and the reader
 * fills a quiet pool's other window figures with when they are read (read.ts). Summing the same
 * candles in the same order gives the same figures to the last digit, wherever they come from.
 *
 * The rule (layout.ts): window w on base B as of base candle `current` sums the candles opened in
 * [current - (buckets - 1) * B, current]; its reference price is the close of the newest candle
 * opened before that, else the open of the oldest candle in it.
 */
import { INTERVAL_SECONDS, WINDOWS, WINDOW_BASES, WINDOW_COUNT } from './layout.js';
import type { CandleRing } from './views.js';

/**
 * Where a pool's stored candles come from (LMDB in the service, shards/stored-candles.ts). Only pools
 * whose candles are all stored give their ring block back, so a quiet pool's newest candles are there.
 */
export interface StoredCandles {
  /**
   * Pool p's newest `count` stored candles of `interval` opening at or before `upTo`, oldest first,
   * into `ring` row `row` at the slots of candles opened - count .. opened - 1 (slot k % slots).
   * Returns how many were found. (The store may hold later candles: a replay behind a run that went further.)
   */
  loadNewest(pool: number, interval: number, count: number, opened: number, upTo: number, ring: CandleRing, row: number): number;
}

/** `winNextChange` of a quiet pool none of whose windows on that base holds a candle: its figures there never change. */
export const NEVER_CHANGES = 0xffff_ffff;

/** Sums of one pool's windows, per window (layout WINDOWS order); sumWindows fills those of one base. */
export interface WindowSums {
  readonly volumeUsd: Float64Array;
  readonly buyVolumeUsd: Float64Array;
  readonly txns: Float64Array;
  readonly buys: Float64Array;
  /** Reference USD prices of token 0 and token 1 (0: none). */
  readonly refPrice: Float64Array;
  readonly refPrice1: Float64Array;
}

export function createWindowSums(): WindowSums {
  const f = () => new Float64Array(WINDOW_COUNT);
  return { volumeUsd: f(), buyVolumeUsd: f(), txns: f(), buys: f(), refPrice: f(), refPrice1: f() };
}

/** Percent change of `price` against reference `ref` (0 without a reference). */
export function priceChange(price: number, ref: number): number {
  return ref > 0 ? (price / ref - 1) * 100 : 0;
}

/** Per window base (WINDOW_BASES order): its longest window, in seconds. */
const LONGEST_WINDOW_S: readonly number[] = WINDOW_BASES.map(({ windows }) => Math.max(...windows.map((w) => WINDOWS[w]!.seconds)));

/**
 * True when, as of base candle `asOf`, no window on base b holds a candle of a pool whose last swap
 * was at `lastSwapTime`: its newest candle is older than the longest window. Its sums there are zero
 * and stay so, its references are its newest candle's, until it swaps again (no candle need be read).
 */
export function windowsEmpty(b: number, asOf: number, lastSwapTime: number): boolean {
  return asOf >= candleOpen(lastSwapTime, WINDOW_BASES[b]!.base) + LONGEST_WINDOW_S[b]!;
}

/** Open time of the candle of `interval` that time `t` falls in. */
export function candleOpen(t: number, interval: number): number {
  return t - (t % INTERVAL_SECONDS[interval]!);
}

/**
 * Sums the windows on base `b` as of the base candle opening at `current` from ring `r` row `row`,
 * which holds the newest min(n, slots) of the n candles ever opened; writes them into `out`.
 * Returns the base candle open at which a candle next leaves one of those windows (Infinity when
 * none holds one): until then, with no new candle, re-summing gives the same figures.
 */
export function sumWindows(r: CandleRing, row: number, n: number, current: number, b: number, out: WindowSums): number {
  const windows = WINDOW_BASES[b]!.windows;
  const R = r.slots;
  const kept = n < R ? n : R;
  let next = Infinity;
  for (let j = 0; j < windows.length; j++) {
    const w = windows[j]!;
    const start = current - (WINDOWS[w]!.buckets - 1) * r.seconds;
    let oldest = Infinity;
    let vol = 0;
    let buyVol = 0;
    let txns = 0;
    let buys = 0;
    let ref = 0;
    let ref1 = 0;
    for (let k = 0; k < kept; k++) {
      const slot = row * R + ((n - 1 - k) % R);
      const time = r.time[slot]!;
      if (time < start) {
        ref = r.close0[slot]!;
        ref1 = r.close1[slot]!;
        break;
      }
      if (time <= current) {
        vol += r.volumeUsd[slot]!;
        buyVol += r.buyVolumeUsd[slot]!;
        txns += r.txns[slot]!;
        buys += r.buys[slot]!;
        // Until an older candle is found: the open of the oldest in the window.
        ref = r.open0[slot]!;
        ref1 = r.open1[slot]!;
        oldest = time;
      }
    }
    // The oldest candle in the window leaves it once the window starts after it.
    const leaves = oldest + WINDOWS[w]!.buckets * r.seconds;
    if (leaves < next) next = leaves;
    out.volumeUsd[w] = vol;
    out.buyVolumeUsd[w] = buyVol;
    out.txns[w] = txns;
    out.buys[w] = buys;
    out.refPrice[w] = ref;
    out.refPrice1[w] = ref1;
  }
  return next;
}

/**
 * Loads pool p's newest candles of base interval `base` (n ever opened, the newest opening at
 * `newestOpen`) from `stored` into row 0 of `scratch`; returns how many it expected and did not find.
 */
export function loadStoredBase(stored: StoredCandles, scratch: CandleRing, p: number, base: number, n: number, newestOpen: number): number {
  const want = n < scratch.slots ? n : scratch.slots;
  if (want === 0) return 0;
  return want - stored.loadNewest(p, base, want, n, newestOpen, scratch, 0);
}
