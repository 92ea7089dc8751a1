import { describe, expect, it } from 'vitest';
import { Iv, WINDOWS, WINDOW_BASES, Win } from './layout.js';
import { createScratchRings } from './read.js';
import { createWindowSums, sumWindows, windowsEmpty } from './windows.js';

/** Candle k (of n) of a one-row ring at its slot, the way the shard writer lays it out. */
function put(r: ReturnType<typeof createScratchRings>[number], k: number, time: number, o1: number, c1: number, volume: number, buy: boolean): void {
  const slot = k % r.slots;
  r.time[slot] = time;
  r.open0[slot] = o1 / 2;
  r.close0[slot] = c1 / 2;
  r.open1[slot] = o1;
  r.close1[slot] = c1;
  r.volumeUsd[slot] = volume;
  r.buyVolumeUsd[slot] = buy ? volume : 0;
  r.txns[slot] = 1;
  r.buys[slot] = buy ? 1 : 0;
}

const M1 = WINDOW_BASES.findIndex((b) => b.base === Iv.M1);

describe('sumWindows', () => {
  it('sums the candles in each window and takes both tokens\' references by the layout rule', () => {
    expect(WINDOWS[Win.M5]!.base).toBe(Iv.M1);
    const T = 1_700_000_040; // minute-aligned
    const r = createScratchRings()[Iv.M1]!;
    // 1 m candles at T-600 (before the 5 m window), T-240 and T (inside it).
    put(r, 0, T - 600, 4, 5, 100, true);
    put(r, 1, T - 240, 6, 7, 10, true);
    put(r, 2, T, 8, 9, 1, false);
    const s = createWindowSums();
    const next = sumWindows(r, 0, 3, T, M1, s);
    expect([s.volumeUsd[Win.M5], s.buyVolumeUsd[Win.M5], s.txns[Win.M5], s.buys[Win.M5]]).toEqual([11, 10, 2, 1]);
    // Reference: the close of the T-600 candle.
    expect([s.refPrice1[Win.M5], s.refPrice[Win.M5]]).toEqual([5, 2.5]);
    // The T-240 candle leaves the window when the window starts after it.
    expect(next).toBe(T - 240 + 5 * 60);

    // Without a candle before the window the reference is the open of the oldest candle in it.
    put(r, 0, T - 120, 6, 7, 3, false);
    put(r, 1, T, 8, 12, 4, true);
    sumWindows(r, 0, 2, T, M1, s);
    expect([s.refPrice1[Win.M5], s.volumeUsd[Win.M5]]).toEqual([6, 7]);

    // As of a later minute with every candle out of the window: nothing summed, the newest close is the reference, nothing leaves.
    expect(sumWindows(r, 0, 2, T + 600, M1, s)).toBe(Infinity);
    expect([s.volumeUsd[Win.M5], s.txns[Win.M5], s.refPrice1[Win.M5]]).toEqual([0, 0, 12]);
  });

  it('knows without a candle when no window on a base can hold one: the newest is older than the longest window', () => {
    const T = 1_700_000_040;
    const r = createScratchRings()[Iv.M1]!;
    put(r, 0, T, 8, 9, 1, false);
    const s = createWindowSums();
    // The longest window on the 1 m base is 5 m: the candle at T is in it as of T + 4 min, out as of T + 5 min.
    expect(windowsEmpty(M1, T + 240, T + 30)).toBe(false);
    expect(sumWindows(r, 0, 1, T + 240, M1, s)).toBe(T + 300);
    expect(s.txns[Win.M5]).toBe(1);
    expect(windowsEmpty(M1, T + 300, T + 30)).toBe(true);
    expect(sumWindows(r, 0, 1, T + 300, M1, s)).toBe(Infinity);
    expect(s.txns[Win.M5]).toBe(0);
    // On the 24 h base the longest window is 30 days.
    const D1 = WINDOW_BASES.findIndex((b) => b.base === Iv.H24);
    expect(windowsEmpty(D1, 86_400 * 20_000 + 29 * 86_400, 86_400 * 20_000 + 5)).toBe(false);
    expect(windowsEmpty(D1, 86_400 * 20_000 + 30 * 86_400, 86_400 * 20_000 + 5)).toBe(true);
  });
});
