import { afterAll, describe, expect, it } from 'vitest';
import { simulatedBatches, TempStores } from '../../test/support/simulated-batches.js';
import type { CommittedBatch } from '../pipeline.js';
import { INTERVALS } from '../state/layout.js';
import { blockHighWater, blockStats, releaseFreeTail, ringBlocks, scopeColumns } from '../state/ring-blocks.js';
import { ringOpenedAt, type EngineViews } from '../state/views.js';
import { LocalShards } from './local.js';

const stores = new TempStores();
const HOUR = 3600;

/** A simulated universe's batches, applied by one tiered shard with a store of its own; the same seed gives the same batches. */
async function universe(): Promise<{ views: EngineViews; shards: LocalShards; groups: (readonly CommittedBatch[])[] }> {
  // Many pools, few swaps: pools trade, go quiet after an hour and free their blocks, others take them.
  const { views, groups } = await simulatedBatches(stores, { seed: 11, pools: 900, hours: 8, swapsPerSecond: 0.4 });
  return { views, shards: new LocalShards(views, stores.open('compact-'), { quietAfterSeconds: HOUR }), groups };
}

/** Columns that say which block or slot holds what, or count writes: they differ between engines that hold the same figures in other blocks. */
const PLACEMENT = new Set(['poolSeq', 'tokenSeq', 'poolBlock', 'blockPool', 'blockFree', 'blockHeader']);

/** Names of the columns whose figures differ: every pool's rows, and each pool's ring block rows wherever its block is. */
function differing(a: EngineViews, b: EngineViews): string[] {
  const out: string[] = [];
  for (const c of a.columnTable) {
    if (PLACEMENT.has(c.name)) continue;
    const d = b.columnTable.find((x) => x.name === c.name)!;
    if (c.scope !== 'block') {
      if (!Buffer.from(c.array.buffer).equals(Buffer.from(d.array.buffer))) out.push(c.name);
      continue;
    }
    const bytes = c.stride * c.array.BYTES_PER_ELEMENT;
    // A ring's slots hold what was written in them: its candles in use, and beyond them what the block's
    // earlier holder left (never read). Only the slots in use are compared there.
    const ring = INTERVALS.findIndex((iv) => c.name === `ring.${iv}.candles`);
    const rows = (v: EngineViews, col: typeof c, p: number) => {
      const blk = v.poolBlock[p]! - 1;
      if (ring < 0) return [Buffer.from(col.array.buffer, blk * bytes, bytes)];
      const n = v.ringOpened[ringOpenedAt(blk, ring)]!;
      const slots = v.rings[ring]!.slots;
      const record = bytes / slots;
      const out: Buffer[] = [];
      for (let k = Math.max(0, n - slots); k < n; k++) out.push(Buffer.from(col.array.buffer, blk * bytes + (k % slots) * record, record));
      return out;
    };
    for (let p = 0; p < a.poolCount; p++) {
      if ((a.poolBlock[p] === 0) !== (b.poolBlock[p] === 0)) {
        out.push(`poolBlock of ${p}`);
        break;
      }
      if (a.poolBlock[p] === 0) continue;
      const [x, y] = [rows(a, c, p), rows(b, d, p)];
      if (x.length !== y.length || x.some((r, k) => !r.equals(y[k]!))) {
        out.push(`${c.name} of pool ${p}`);
        break;
      }
    }
  }
  return out;
}

afterAll(() => stores.close());

describe('ring blocks moved down', () => {
  it('a pool moved to a lower block holds and goes on with exactly the figures it would have kept, and the free tail goes back', async () => {
    const a = await universe();
    const b = await universe();
    expect(a.groups.length).toBe(b.groups.length);
    let moved = 0;
    let released = 0;
    let lowerThanB = 0;
    for (let i = 0; i < a.groups.length; i++) {
      for (const s of [a, b]) {
        await s.shards.apply(s.groups[i]!);
        s.shards.sweep(16);
        await s.shards.durable();
      }
      // Only `a` moves its pools down, at every step: `b` keeps every pool where it took its block.
      moved += a.shards.tiers.compactBlocks(Infinity);
      // And gives back every free block above them, however few (a service waits for 2 MiB of them):
      // the blocks taken there later come zeroed.
      released += releaseFreeTail(ringBlocks(a.views), scopeColumns(a.views, 'block', ringBlocks(a.views)), 1);
      expect(differing(a.views, b.views)).toEqual([]);
      const { used } = blockStats(a.views);
      // Moved down as far as blocks are free: every block in use is below the count in use, but
      // those of pools handing their candles over (they are freed once the write is on disk).
      let above = 0;
      for (let blk = used; blk < blockHighWater(a.views); blk++) if (a.views.blockPool[blk] !== 0) above++;
      expect(above).toBeLessThanOrEqual(a.shards.tiers.handingOver);
      if (blockHighWater(a.views) < blockHighWater(b.views)) lowerThanB++;
    }
    expect(blockStats(a.views).used).toBeGreaterThan(20);
    expect(moved).toBeGreaterThan(20);
    expect(released).toBeGreaterThan(0);
    expect(lowerThanB).toBeGreaterThan(0);
    expect(a.shards.tiers.stats().missing).toBe(0);
  });
});
