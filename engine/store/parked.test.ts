import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CANDLE_FIELDS } from './candles.js';
import { PARKED_KEPT_SECONDS, PARKED_STRIDE, PARKED_WINDOW_FIGURES, parkedAt, parkedBatch, parkedCandlesEnd, parkedValue, parkedWindowsAt, pruneParked } from './parked.js';
import { openStore } from './store.js';
import { WINDOW_BASES } from '../state/layout.js';

const DAY = 86_400;
const NOW = 1_800_000_000;

/** A version with one open day candle and the windows of the day base, written at `batch`, its candle closing at `closesAt`. */
function version(batch: number, closesAt: number): number[] {
  const candle = [8, closesAt - DAY, ...Array.from({ length: CANDLE_FIELDS - 1 }, (_, k) => k + 1)];
  const base = WINDOW_BASES.length - 1;
  const windows = [base, closesAt - DAY + 600, ...WINDOW_BASES[base]!.windows.flatMap((w) => PARKED_WINDOW_FIGURES.map((_, k) => w * 10 + k))];
  return parkedValue(batch, closesAt, candle, windows);
}

describe('versions of quiet pools’ open state', () => {
  it('lays a version out as its head, its candles, then its window entries, each found where it was put', () => {
    const v = version(7, NOW);
    expect(parkedBatch(v)).toBe(7);
    expect(parkedCandlesEnd(v)).toBe(3 + PARKED_STRIDE);
    const base = WINDOW_BASES.length - 1;
    expect(parkedWindowsAt(v, base)).toBe(parkedCandlesEnd(v));
    expect(v[parkedWindowsAt(v, base) + 1]).toBe(NOW - DAY + 600);
    expect(parkedWindowsAt(v, 0)).toBe(-1);
    expect(v.length).toBe(parkedCandlesEnd(v) + 2 + WINDOW_BASES[base]!.windows.length * PARKED_WINDOW_FIGURES.length);
  });

  it('prunes what no kept snapshot can need: older versions at or before the oldest snapshot, and the newest there once closed a week before the clock', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dexdata-parked-'));
    const store = openStore(dir);
    try {
      const oldestKept = 100;
      await store.root.transaction(() => {
        // Pool 1: three versions before the oldest snapshot and one after: only the newest before it and the one after stay.
        store.parked.put([1, 3], version(10, NOW));
        store.parked.put([1, 5], version(40, NOW));
        store.parked.put([1, 9], version(90, NOW));
        store.parked.put([1, 12], version(150, NOW));
        // Pool 2: one version before, closed more than a week ago: dropped.
        store.parked.put([2, 4], version(20, NOW - PARKED_KEPT_SECONDS - 10));
        // Pool 3: one version before, closed less than a week ago: kept.
        store.parked.put([3, 1], version(30, NOW - PARKED_KEPT_SECONDS + 10));
        // Pool 4: only versions after the oldest snapshot: all kept, however old.
        store.parked.put([4, 2], version(120, NOW - 2 * PARKED_KEPT_SECONDS));
        store.parked.put([4, 6], version(130, NOW - 2 * PARKED_KEPT_SECONDS));
      });
      const dropped = await pruneParked(store, oldestKept, () => NOW);
      expect(dropped).toBe(3);
      expect([...store.parked.getKeys()]).toEqual([
        [1, 9],
        [1, 12],
        [3, 1],
        [4, 2],
        [4, 6],
      ]);
      expect(parkedAt(store, 1, 9)).toEqual(version(90, NOW));
      expect(parkedAt(store, 1, 5)).toBeUndefined();
      // A second pass finds nothing more to drop.
      expect(await pruneParked(store, oldestKept, () => NOW)).toBe(0);
      // Many pools, read a page at a time: each keeps its newest version before the oldest snapshot.
      await store.root.transaction(() => {
        for (let p = 10; p < 3510; p++) for (let k = 0; k < 3; k++) store.parked.put([p, k], version(k + 1, NOW));
      });
      expect(await pruneParked(store, oldestKept, () => NOW)).toBe(7000);
      const kept = [...store.parked.getKeys({ start: [10], end: [3510] })];
      expect(kept.length).toBe(3500);
      expect(kept.every((k) => k[1] === 2)).toBe(true);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
