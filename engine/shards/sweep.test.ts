import { afterAll, describe, expect, it } from 'vitest';
import { simulatedBatches, TempStores } from '../../test/support/simulated-batches.js';
import type { CommittedBatch } from '../pipeline.js';
import type { EngineViews } from '../state/views.js';
import { LocalShards } from './local.js';
import { windowsMayMove } from './sweep.js';

const DAY = 86_400;
const stores = new TempStores();

/** A simulated universe's batches, ingested into fresh views; the same seed gives the same batches. */
async function universe(): Promise<{ views: EngineViews; shards: LocalShards; groups: (readonly CommittedBatch[])[] }> {
  // Few swaps over many pools: most pools never trade, some trade once, as on a real network.
  const { views, groups } = await simulatedBatches(stores, { seed: 5, pools: 600, hours: 3, swapsPerSecond: 0.2 });
  return { views, shards: new LocalShards(views, null), groups };
}

/** A sweep that visits every pool (what a sweep of the set must equal), then gives back idle second blocks as a sweep does. */
function sweepEveryPool(shards: LocalShards, v: EngineViews): void {
  for (let p = 0; p < v.poolCount; p++) if (v.poolExists[p] === 1) shards.writer.refreshWindows(p, v.chainClock[v.poolChain[p]!]!);
  shards.tiers.sweepSeconds();
}

function sameColumns(a: EngineViews, b: EngineViews): string[] {
  const differ: string[] = [];
  for (const [name, sab] of Object.entries(a.buffers.columns)) {
    if (name === 'poolSeq' || name === 'tokenSeq') continue;
    if (!Buffer.from(sab).equals(Buffer.from(b.buffers.columns[name]!))) differ.push(name);
  }
  return differ;
}

afterAll(() => stores.close());

describe('window sweep', () => {
  it('visits only pools whose windows may still move, and leaves every window as a sweep of every pool does', async () => {
    const a = await universe();
    const b = await universe();
    expect(a.groups.length).toBe(b.groups.length);
    const swapped = new Set<number>();
    for (let i = 0; i < a.groups.length; i++) {
      await a.shards.apply(a.groups[i]!);
      await b.shards.apply(b.groups[i]!);
      a.shards.sweep(16);
      sweepEveryPool(b.shards, b.views);
      for (let p = 0; p < a.views.poolCount; p++) if (a.views.lastSwapTime[p]! > 0) swapped.add(p);
    }
    const v = a.views;
    const set = a.shards.writer.sweepSet;
    // Every pool whose windows may move is in the set; pools that never swapped are not.
    for (let p = 0; p < v.poolCount; p++) {
      if (v.poolExists[p] !== 1) continue;
      if (windowsMayMove(v, p)) expect(set.has(p)).toBe(true);
      if (!swapped.has(p)) expect(set.has(p)).toBe(false);
    }
    expect(swapped.size).toBeGreaterThan(0);
    expect(set.count).toBeLessThan(v.poolCount / 2);
    expect(sameColumns(a.views, b.views)).toEqual([]);

    // A month and a day later every window has emptied: both sweeps agree, and the set is empty.
    for (const views of [a.views, b.views]) for (let c = 0; c < 16; c++) if (views.chainClock[c]! > 0) views.chainClock[c] = views.chainClock[c]! + 31 * DAY;
    a.shards.sweep(16);
    sweepEveryPool(b.shards, b.views);
    expect(set.count).toBe(0);
    expect(sameColumns(a.views, b.views)).toEqual([]);
  });
});
