import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CANDLE_FIELDS, CANDLES_PER_CHUNK, chunkStart, mergeChunk, storedCandles } from './candles.js';
import { openStore } from './store.js';

const candle = (time: number, close: number): number[] => [time, close, close, close, close, 1, 1, 1, 1, 10, 5, 2, 1];

describe('candle chunks', () => {
  it('merges by open time, the newer copy winning, in time order', () => {
    const a = [...candle(60, 1), ...candle(180, 3)];
    const b = [...candle(120, 2), ...candle(180, 30), ...candle(240, 4)];
    const m = mergeChunk(a, b);
    expect(m.length).toBe(4 * CANDLE_FIELDS);
    const times = Array.from({ length: 4 }, (_, i) => m[i * CANDLE_FIELDS]);
    expect(times).toEqual([60, 120, 180, 240]);
    expect(m[2 * CANDLE_FIELDS + 4]).toBe(30);
  });

  it('reads the candles of a time range across chunk boundaries, forward and backward', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dexdata-candles-'));
    const store = openStore(dir);
    try {
      const iv = 0; // 1m
      const times = Array.from({ length: 200 }, (_, i) => 1_800_000_000 + i * 60 * 3); // every third minute
      const chunks = new Map<number, number[]>();
      for (const t of times) {
        const start = chunkStart(iv, t);
        expect(t - start).toBeLessThan(CANDLES_PER_CHUNK * 60);
        chunks.set(start, mergeChunk(chunks.get(start), candle(t, t / 1e6)));
      }
      await store.root.transaction(() => {
        for (const [start, data] of chunks) store.candles.put([7, iv, start], data);
        store.candles.put([8, iv, chunkStart(iv, times[0]!)], candle(times[0]!, 99)); // another pool
      });
      const from = times[10]! - 30;
      const to = times[150]!;
      const forward = [...storedCandles(store, 7, iv, from, to)].map((c) => c.time);
      expect(forward).toEqual(times.slice(10, 151));
      const backward = [...storedCandles(store, 7, iv, from, to, true)].map((c) => c.time);
      expect(backward).toEqual(times.slice(10, 151).reverse());
      const one = [...storedCandles(store, 7, iv, times[42]!, times[42]!)];
      expect(one.map((c) => [c.time, c.record[3]])).toEqual([[times[42], times[42]! / 1e6]]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
