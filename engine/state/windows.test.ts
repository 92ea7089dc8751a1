import { describe, expect, it } from 'vitest';
import { Iv, WINDOWS, WINDOW_BASES, Win } from './layout.js';
import { createScratchRings } from './read.js';
import { setCandleValue } from './candle-record.js';
import { createLeavingCandle, createWindowSums, sumWindows, windowsEmpty, type LeavingCandle, type StoredCandles } from './windows.js';

/** Candle k (of n) of a one-row ring at its slot, the way the shard writer lays it out. */
function put(r: ReturnType<typeof createScratchRings>[number], k: number, time: number, o1: number, c1: number, volume: number, buy: boolean): void {
  const slot = k % r.slots;
  setCandleValue(r, slot, 'time', time);
  setCandleValue(r, slot, 'open0', o1 / 2);
  setCandleValue(r, slot, 'close0', c1 / 2);
  setCandleValue(r, slot, 'open1', o1);
  setCandleValue(r, slot, 'close1', c1);
  setCandleValue(r, slot, 'volumeUsd', volume);
  setCandleValue(r, slot, 'buyVolumeUsd', buy ? volume : 0);
  setCandleValue(r, slot, 'txns', 1);
  setCandleValue(r, slot, 'buys', buy ? 1 : 0);
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

  it('takes out of a window the one-minute candles of its oldest base candle that have left it, oldest first, to the minute', () => {
    const M5 = WINDOW_BASES.findIndex((b) => b.base === Iv.M5);
    expect(WINDOWS[Win.M15]!.base).toBe(Iv.M5);
    const X = 1_700_000_100; // on a 5 m boundary
    const r = createScratchRings()[Iv.M5]!;
    // 5 m candles at X - 1200 (before), X - 900 (three swaps, one a minute at X - 900, X - 780, X - 720) and X.
    put(r, 0, X - 1200, 13, 14, 50, false);
    put(r, 1, X - 900, 20, 26, 7, true);
    setCandleValue(r, 1, 'txns', 3);
    setCandleValue(r, 1, 'buys', 3);
    put(r, 2, X, 30, 32, 8, false);
    const minutes: [number, number, number][] = [
      [X - 900, 1, 22],
      [X - 780, 2, 24],
      [X - 720, 4, 26],
    ];
    let reads = 0;
    const stored: StoredCandles = {
      loadNewest: () => 0,
      firstMinute(pool, from, to, out) {
        let found = false;
        this.minutes(pool, from, to, (c) => {
          Object.assign(out, c);
          found = true;
          return false;
        });
        return found;
      },
      minutes(pool, from, to, visit) {
        const c: LeavingCandle = createLeavingCandle();
        for (const [time, volume, close1] of minutes) {
          if (time < from || time >= to) continue;
          reads++;
          Object.assign(c, { time, volumeUsd: volume, buyVolumeUsd: volume, txns: 1, buys: 1, close0: close1 / 2, close1 });
          if (!visit(c)) return;
        }
      },
    };
    const s = createWindowSums();
    // 2 minutes into the 5 m candle at X: the 15 m window is [X - 720, X + 120], the minutes at X - 900 and X - 780 have left.
    const m = X + 120;
    const next = sumWindows(r, 0, 3, m, M5, s, stored, 7, m);
    expect([s.volumeUsd[Win.M15], s.txns[Win.M15], s.buys[Win.M15], s.buyVolumeUsd[Win.M15]]).toEqual([12, 2, 1, 4]);
    // One window ago: the close of the newest minute before it (X - 780), not of the 5 m candle before (X - 1200).
    expect([s.refPrice1[Win.M15], s.refPrice[Win.M15]]).toEqual([24, 12]);
    // The minute at X - 720 leaves first (the 30 m and 1 h windows hold the X - 1200 candle until their anchors move).
    expect(next).toBe(X - 720 + 900);
    expect(reads).toBeGreaterThan(0);
    // Without the stored minutes (a ring block's windows: the writer takes them out as they leave) the base candles' sums.
    sumWindows(r, 0, 3, m, M5, s);
    expect([s.volumeUsd[Win.M15], s.txns[Win.M15], s.refPrice1[Win.M15]]).toEqual([15, 4, 14]);
    // At the last minute of the 5 m candle at X the anchor has moved: the window is the base candles at X - 600 .. X, nothing to take out.
    sumWindows(r, 0, 3, X + 240, M5, s, stored, 7, X + 240);
    expect([s.volumeUsd[Win.M15], s.txns[Win.M15], s.refPrice1[Win.M15]]).toEqual([8, 1, 26]);
  });
});
