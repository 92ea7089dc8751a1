import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { metaKeys, openStore, type Store } from '../store/store.js';
import { settleWatermarks, shardWatermarks, storedByEveryShard } from './assignment.js';

async function withStore(fn: (store: Store) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dexdata-watermarks-'));
  const store = openStore(dir);
  try {
    await fn(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const put = (store: Store, marks: Record<number, number>) =>
  store.root.transaction(() => {
    for (const [s, w] of Object.entries(marks)) store.meta.put(metaKeys.shardWatermark(Number(s)), w);
  });

describe('shard watermarks at a start', () => {
  it('are settled at the lowest kept for every thread of the run, those of threads it does not have dropped', async () => {
    await withStore(async (store) => {
      // A kill left thread 0 behind thread 1; an earlier run had a third thread.
      await put(store, { 0: 300, 1: 500, 2: 700 });
      expect(await store.root.transaction(() => settleWatermarks(store, 2))).toBe(300);
      expect([...shardWatermarks(store)].sort()).toEqual([
        [0, 300],
        [1, 300],
      ]);
      // A chain thread 0 wrote last run may be thread 1's now: once thread 0 commits again (its own
      // chains stored through 450), the lowest still does not speak past 300 for thread 1's chains.
      await put(store, { 0: 450 });
      expect(storedByEveryShard(store)).toBe(300);
    });
  });

  it('are raised to a loaded snapshot’s batch, everything up to it being stored', async () => {
    await withStore(async (store) => {
      await put(store, { 0: 300, 1: 500 });
      expect(await store.root.transaction(() => settleWatermarks(store, 3, 400))).toBe(400);
      expect([...shardWatermarks(store)].sort()).toEqual([
        [0, 400],
        [1, 400],
        [2, 400],
      ]);
    });
  });

  it('start at 0 on a store that has none', async () => {
    await withStore(async (store) => {
      expect(await store.root.transaction(() => settleWatermarks(store, 2))).toBe(0);
      expect(storedByEveryShard(store)).toBe(0);
    });
  });
});
