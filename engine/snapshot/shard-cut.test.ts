import { afterAll, describe, expect, it } from 'vitest';
import { simulatedBatches, TempStores } from '../../test/support/simulated-batches.js';
import type { CommittedBatch } from '../pipeline.js';
import { LocalShards } from '../shards/local.js';
import type { EngineViews } from '../state/views.js';
import { captureShardBlocks, WINDOW_SLOTS, type BlockCapture } from './blocks.js';
import { CaptureArena, captureShardRows, runsByShard } from './capture.js';
import { DirtyRows } from './dirty.js';
import { copied, CutMarks, ShardCut } from './shard-cut.js';

const stores = new TempStores();

/**
 * A simulated universe ingested into fresh views, its batches kept; the first `first` groups of
 * them applied (the same seed gives the same batches and ids).
 */
async function universe(first: (groups: number) => number, swapsPerSecond = 0.3): Promise<{ views: EngineViews; shards: LocalShards; rest: (readonly CommittedBatch[])[]; applied: number }> {
  const { views, groups } = await simulatedBatches(stores, { seed: 11, pools: 600, hours: 4, swapsPerSecond });
  const shards = new LocalShards(views, null);
  const n = first(groups.length);
  for (const g of groups.slice(0, n)) await shards.apply(g);
  return { views, shards, rest: groups.slice(n), applied: n };
}

function bytesOf(c: BlockCapture): { pools: number[]; columns: { mask: string; words: string }[] } {
  const hex = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength).toString('hex');
  return { pools: [...c.pools], columns: c.columns.map((col) => ({ mask: hex(col.mask), words: hex(col.words) })) };
}

afterAll(() => stores.close());

describe('a shard cut copying its rows after it returns', () => {
  it('hands over the rows as of the cut while the shard goes on writing them, and only because it is told before each write', async () => {
    const half = (groups: number) => Math.floor(groups / 2);
    // What a copy made at the cut, with nothing written since, holds.
    const atCut = await universe(half);
    const expected = { blocks: bytesOf(captureShardBlocks(atCut.views, () => true)), slots: bytesOf(captureShardBlocks(atCut.views, () => true, new CaptureArena(), WINDOW_SLOTS)) };
    expect(expected.blocks.pools.length).toBeGreaterThan(50);
    expect(expected.slots.pools.length).toBeGreaterThan(50);

    const cutThenWrite = async (told: boolean) => {
      // A cut a third through, copied while the batches up to half way are applied; then the cut
      // compared, made with the same marks and buffers (a shard's next cut).
      const third = (groups: number) => Math.floor(groups / 3);
      const { views, shards, rest, applied } = await universe(third);
      const toHalf = half(applied + rest.length) - applied;
      expect(toHalf).toBeGreaterThan(3);
      const marks = new CutMarks(2048, 2048);
      const arena = new CaptureArena();
      const runs = () => runsByShard(views, 1, () => 0, views.poolCount, views.tokenCount, () => true)[0]!;
      const before = new ShardCut(views, runs(), new DirtyRows(2048, 2048), false, arena, () => true, marks, []);
      if (told) shards.writer.cut = before;
      // Slices between the batches, as a shard makes them: one kind may end while the other goes on.
      for (const g of rest.slice(0, toHalf)) {
        await shards.apply(g);
        for (let k = 0; k < 8; k++) if (before.step(0)) shards.writer.cut = null;
      }
      before.step(Infinity);
      shards.writer.cut = null;
      await copied(before.handOver());
      // Once a copy is done, no mark is left for the next cut, whatever it is told after.
      for (let p = 0; p < views.poolCount; p++) before.before(p);
      for (const bits of [marks.blocks, marks.windowSlots, marks.rows.pools]) expect([...bits.within([0, 2048])]).toEqual([]);
      const cut = new ShardCut(views, runs(), new DirtyRows(2048, 2048), false, arena, () => true, marks, []);
      if (told) shards.writer.cut = cut;
      // One slice of at most 16 pools per kind, then the rest of the batches and a window sweep while the copy is under way.
      expect(cut.step(0)).toBe(false);
      for (const g of rest.slice(toHalf)) await shards.apply(g);
      shards.sweep(16);
      cut.step(Infinity);
      shards.writer.cut = null;
      const capture = await copied(cut.handOver());
      // The writes reached the rows the cut copies: the views differ from the cut's.
      expect(bytesOf(captureShardBlocks(views, () => true))).not.toEqual(expected.blocks);
      return { blocks: bytesOf(capture.blocks), slots: bytesOf(capture.windowSlots) };
    };
    const told = await cutThenWrite(true);
    expect(told.blocks).toEqual(expected.blocks);
    expect(told.slots).toEqual(expected.slots);
    // A writer that does not say what it is about to write leaves later rows in the copy.
    const untold = await cutThenWrite(false);
    expect(untold.blocks).not.toEqual(expected.blocks);
  }, 60_000);

  it('in a delta cut, hands over the changed rows as of the cut while the shard goes on writing them', async () => {
    const third = (groups: number) => Math.floor(groups / 3);
    /** A universe a third through, its marks cleared (a cut just taken), then the next `n` groups applied. */
    const marked = async () => {
      const u = await universe(third, 4);
      u.shards.writer.dirty.clear();
      const n = Math.floor(u.rest.length / 2);
      for (const g of u.rest.slice(0, n)) await u.shards.apply(g);
      return { ...u, rest: u.rest.slice(n), runs: runsByShard(u.views, 1, () => 0, u.views.poolCount, u.views.tokenCount, () => true)[0]! };
    };
    const hex = (cols: readonly Uint8Array[]) => cols.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength).toString('hex'));
    const e = await marked();
    const expected = captureShardRows(e.views, e.runs, e.shards.writer.dirty, true);
    // More pools than one slice copies, and tokens after them: most rows are left to the writes and the slices after.
    expect(expected.rows!.pools.length).toBeGreaterThan(300);
    expect(expected.rows!.tokens.length).toBeGreaterThan(50);

    const cutThenWrite = async (told: boolean) => {
      const { views, shards, rest, runs } = await marked();
      const cut = new ShardCut(views, runs, shards.writer.dirty, true, new CaptureArena(), () => true, new CutMarks(2048, 2048), []);
      if (told) shards.writer.cut = cut;
      // One slice (256 rows), then the rest of the batches and a sweep while the copy is under way.
      expect(cut.step(0)).toBe(false);
      for (const g of rest) await shards.apply(g);
      shards.sweep(16);
      cut.step(Infinity);
      shards.writer.cut = null;
      return copied(cut.handOver());
    };
    const told = await cutThenWrite(true);
    expect([...told.rows!.pools]).toEqual([...expected.rows!.pools]);
    expect([...told.rows!.tokens]).toEqual([...expected.rows!.tokens]);
    expect(hex(told.columns)).toEqual(hex(expected.columns));
    // Unwarned, the copy holds rows written after the cut.
    const untold = await cutThenWrite(false);
    expect(hex(untold.columns)).not.toEqual(hex(expected.columns));
  }, 60_000);
});
