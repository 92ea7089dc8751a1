import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allStoredCandles, CANDLE_FIELDS, CANDLES_PER_CHUNK, chunkStart, mergeChunk, putChunks, REFERENCE_TXNS, storedCandles } from './candles.js';
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

  it('stores a coarse candle equal to a finer one as a reference, and reads it back as the candle it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dexdata-candles-'));
    const store = openStore(dir);
    try {
      const t = 1_800_000_000 - (1_800_000_000 % 86_400); // a day boundary: every interval's candle opens there
      const p = 3;
      // A one-trade minute at t + 7 min; a 5m and a 1h candle holding only it; a 1h candle a trade more (not equal).
      const lone = [2.5, 2.5, 2.5, 2.5, 0.4, 0.4, 0.4, 0.4, 100, 100, 1, 1];
      const minute = [t + 420, ...lone];
      const five = [t + 300, ...lone];
      const hour = [t, ...lone];
      const later = [t + 3600, 2.5, 2.6, 2.5, 2.6, 0.4, 0.4, 0.38, 0.38, 300, 100, 2, 1];
      // 10m candles: one equal to the 5m candle (a reference to a 5m, not 1m, candle: the minute there differs), one not.
      const tenMinute = [t + 1200, 9, 9, 9, 9, 1, 1, 1, 1, 7, 0, 3, 0];
      const fiveInTen = [t + 1500, 9, 9, 9, 9, 1, 1, 1, 1, 7, 0, 3, 0];
      const minutesInTen = [t + 1500, 9, 9, 9, 9, 1, 1, 1, 1, 3, 0, 1, 0, t + 1560, 9, 9, 9, 9, 1, 1, 1, 1, 4, 0, 2, 0];
      const iv = { m1: 0, m5: 1, m10: 2, h1: 5 };
      await store.root.transaction(() => {
        // Given coarse first: finer chunks still go first.
        putChunks(store, [
          { pool: p, interval: iv.h1, start: chunkStart(iv.h1, t), data: [...hour, ...later] },
          { pool: p, interval: iv.m10, start: chunkStart(iv.m10, t), data: tenMinute },
          { pool: p, interval: iv.m5, start: chunkStart(iv.m5, t), data: [...five, ...fiveInTen] },
          { pool: p, interval: iv.m1, start: chunkStart(iv.m1, t), data: [...minute, ...minutesInTen] },
        ]);
      });
      const raw = (interval: number) => store.candles.get([p, interval, chunkStart(interval, t)])!;
      // Stored: references where a finer candle is equal, literal candles elsewhere.
      expect(raw(iv.m1)[11]).toBe(1);
      expect(raw(iv.m5).slice(0, CANDLE_FIELDS)).toEqual([t + 300, t + 420, iv.m1, 0, 0, 0, 0, 0, 0, 0, 0, REFERENCE_TXNS, 0]);
      expect(raw(iv.m5)[CANDLE_FIELDS + 11]).toBe(3);
      expect(raw(iv.m10)).toEqual([t + 1200, t + 1500, iv.m5, 0, 0, 0, 0, 0, 0, 0, 0, REFERENCE_TXNS, 0]);
      expect(raw(iv.h1).slice(0, CANDLE_FIELDS)).toEqual([t, t + 420, iv.m1, 0, 0, 0, 0, 0, 0, 0, 0, REFERENCE_TXNS, 0]);
      expect(raw(iv.h1).slice(CANDLE_FIELDS)).toEqual(later);
      // Read: every candle is what was given, forward, backward and in the full listing.
      const read = (interval: number, reverse = false) => [...storedCandles(store, p, interval, t, t + 86_400, reverse)].map((c) => [c.time, ...c.record]);
      expect(read(iv.m5)).toEqual([five, fiveInTen]);
      expect(read(iv.m10)).toEqual([tenMinute]);
      expect(read(iv.h1)).toEqual([hour, later]);
      expect(read(iv.h1, true)).toEqual([later, hour]);
      const all = new Map([...allStoredCandles(store)].map(({ key, record }) => [key.join('/'), [key[2], ...record]]));
      expect(all.get(`${p}/${iv.h1}/${t}`)).toEqual(hour);
      expect(all.get(`${p}/${iv.m10}/${t + 1200}`)).toEqual(tenMinute);
      // Written again (a replay after a crash): merged, still the same candles.
      await store.root.transaction(() => putChunks(store, [{ pool: p, interval: iv.h1, start: chunkStart(iv.h1, t), data: hour }]));
      expect(read(iv.h1)).toEqual([hour, later]);
      // A reference whose candle is gone is an error, not a wrong answer.
      await store.root.transaction(() => store.candles.remove([p, iv.m1, chunkStart(iv.m1, t)]));
      expect(() => read(iv.h1)).toThrow(/refers to a 1m candle at \d+ that is not stored/);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds the equal finer candle where the intervals between are not stored yet, and passes over stored candles that differ', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dexdata-candles-'));
    const store = openStore(dir);
    try {
      const t = 1_800_000_000 - (1_800_000_000 % 86_400);
      const p = 5;
      const iv = { m1: 0, m5: 1, m30: 4, h6: 6, h12: 7, d1: 8 };
      const lone = [2.5, 2.5, 2.5, 2.5, 0.4, 0.4, 0.4, 0.4, 100, 100, 1, 1];
      const at = (interval: number, time: number, data: number[]) => ({ pool: p, interval, start: chunkStart(interval, time), data: [time, ...data] });
      // One swap at t + 7 min. As a running engine stores them: its minute, 5 and 30 minutes as they
      // leave their rings; its hour not yet (64 hours in the ring); the 6 h, 12 h and day candles as they close.
      await store.root.transaction(() => putChunks(store, [at(iv.m1, t + 420, lone), at(iv.m5, t + 300, lone)]));
      await store.root.transaction(() => putChunks(store, [at(iv.m30, t, lone)]));
      await store.root.transaction(() => putChunks(store, [at(iv.h6, t, lone)]));
      // The second half of the day had two trades: its 12 h candle is not equal to the day's.
      const pair = [2.5, 2.7, 2.5, 2.7, 0.4, 0.4, 0.37, 0.37, 250, 100, 2, 1];
      const day = [2.5, 2.7, 2.5, 2.7, 0.4, 0.4, 0.37, 0.37, 350, 200, 3, 2];
      await store.root.transaction(() => putChunks(store, [at(iv.h12, t, lone), at(iv.h12, t + 43_200, pair), at(iv.d1, t, day)]));
      const raw = (interval: number, time: number) => {
        const chunk = store.candles.get([p, interval, chunkStart(interval, time)])!;
        for (let k = 0; k < chunk.length; k += CANDLE_FIELDS) if (chunk[k] === time) return chunk.slice(k, k + CANDLE_FIELDS);
        return null;
      };
      const toMinute = (time: number) => [time, t + 420, iv.m1, 0, 0, 0, 0, 0, 0, 0, 0, REFERENCE_TXNS, 0];
      // Each refers to the minute, found under the intervals not stored yet (the hour under the 6 h).
      expect(raw(iv.h6, t)).toEqual(toMinute(t));
      expect(raw(iv.h12, t)).toEqual(toMinute(t));
      expect(raw(iv.h12, t + 43_200)).toEqual([t + 43_200, ...pair]);
      expect(raw(iv.d1, t)).toEqual([t, ...day]);
      for (const interval of [iv.h6, iv.h12]) expect([...storedCandles(store, p, interval, t, t)].map((c) => [c.time, ...c.record])).toEqual([[t, ...lone]]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('follows a reference to a candle that a rewrite turned into a reference itself', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dexdata-candles-'));
    const store = openStore(dir);
    try {
      const t = 1_800_000_000 - (1_800_000_000 % 86_400);
      const p = 4;
      const iv = { m1: 0, m10: 2, m30: 4 };
      const lone = [2.5, 2.5, 2.5, 2.5, 0.4, 0.4, 0.4, 0.4, 100, 100, 1, 1];
      // The 10-minute candle is stored whole (its minute not yet stored), and the 30-minute one refers to it.
      await store.root.transaction(() => putChunks(store, [{ pool: p, interval: iv.m10, start: chunkStart(iv.m10, t), data: [t, ...lone] }]));
      await store.root.transaction(() => putChunks(store, [{ pool: p, interval: iv.m30, start: chunkStart(iv.m30, t), data: [t, ...lone] }]));
      // A replay stores the minute, and rewrites the 10-minute candle as a reference to it.
      await store.root.transaction(() =>
        putChunks(store, [
          { pool: p, interval: iv.m1, start: chunkStart(iv.m1, t + 120), data: [t + 120, ...lone] },
          { pool: p, interval: iv.m10, start: chunkStart(iv.m10, t), data: [t, ...lone] },
        ]),
      );
      expect(store.candles.get([p, iv.m10, chunkStart(iv.m10, t)])![11]).toBe(REFERENCE_TXNS);
      expect(store.candles.get([p, iv.m30, chunkStart(iv.m30, t)])![2]).toBe(iv.m10);
      expect([...storedCandles(store, p, iv.m30, t, t)].map((c) => [c.time, ...c.record])).toEqual([[t, ...lone]]);
      expect([...allStoredCandles(store)].filter((c) => c.key[1] === iv.m30).map((c) => c.record)).toEqual([lone]);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

