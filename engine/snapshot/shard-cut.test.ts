import { afterAll, describe, expect, it } from 'vitest';
import { simulatedBatches, TempStores } from '../../test/support/simulated-batches.js';
import type { CommittedBatch } from '../pipeline.js';
import { LocalShards } from '../shards/local.js';
import type { EngineViews } from '../state/views.js';
import { captureShardBlocks, RING_BLOCKS, WINDOW_SLOTS, type BlockCapture, type HeldRows } from './blocks.js';
import { blockColumns } from './format.js';
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

  it('after its first cut, copies the candles of the pools whose candles it wrote since, and lists the rest as the previous cut holds them', async () => {
    const third = (groups: number) => Math.floor(groups / 3);
    const { views, shards, rest } = await universe(third, 4);
    const marks = new CutMarks(2048, 2048);
    const arena = new CaptureArena();
    const dirty = shards.writer.dirty;
    const runs = () => runsByShard(views, 1, () => 0, views.poolCount, views.tokenCount, () => true)[0]!;
    // The first cut copies every pool holding a block or slot (told `held`, it has no list of a cut before).
    const first = new ShardCut(views, runs(), dirty, false, arena, () => true, marks, [], true);
    first.step(Infinity);
    const a = await copied(first.handOver());
    expect(a.blocks.kept.pools.length).toBe(0);
    const before = decodedRows(a.blocks, views, RING_BLOCKS);
    // A few batches and a sweep later (some pools traded, windows moved), a delta cut told `held`.
    for (const g of rest.slice(0, 2)) await shards.apply(g);
    shards.sweep(16);
    const traded = new Set([...dirty.candles.within([0, views.poolCount])]);
    const written = new Set([...dirty.pools.within([0, views.poolCount])]);
    const second = new ShardCut(views, runs(), dirty, true, arena, () => true, marks, [], true);
    // Written while the copy is under way: rows as of the cut all the same.
    shards.writer.cut = second;
    expect(second.step(0)).toBe(false);
    const atCut = { blocks: liveRows(views, RING_BLOCKS), slots: liveRows(views, WINDOW_SLOTS) };
    for (const g of rest.slice(2, 4)) await shards.apply(g);
    shards.sweep(16);
    second.step(Infinity);
    shards.writer.cut = null;
    const b = await copied(second.handOver());

    const copiedPools = [...b.blocks.pools];
    const kept = [...b.blocks.kept.pools];
    expect(kept.length, 'ring blocks kept').toBeGreaterThan(10);
    expect(copiedPools.length, 'ring blocks copied whole').toBeGreaterThan(0);
    // Some kept pools' windows moved (the sweep): their candles are kept all the same.
    expect(kept.some((p) => written.has(p))).toBe(true);
    // Copied whole: every pool holding a block whose candles changed since; kept: every other, none of them traded.
    const holding = [...atCut.blocks.keys()].sort((x, y) => x - y);
    expect([...copiedPools, ...kept].sort((x, y) => x - y)).toEqual(holding);
    for (const p of kept) expect(traded.has(p), `pool ${p} kept though it traded`).toBe(false);
    for (const p of copiedPools) expect(traded.has(p) || !before.has(p), `pool ${p} copied though its candles are unchanged`).toBe(true);
    // Each kept pool is at its place in the first cut's list, and its candles at the cut are the ones that cut copied.
    const listed = [...a.blocks.pools];
    b.blocks.kept.at.forEach((i, k) => expect(listed[i]).toBe(kept[k]));
    const candles = candleWords(views);
    for (const p of kept) expect(atCut.blocks.get(p)!.filter((_, w) => candles[w]), `candles of kept pool ${p}`).toEqual(before.get(p)!.filter((_, w) => candles[w]));
    // The copy holds every pool's rows as of the cut: whole for those copied, the window state for those kept.
    const got = decodedRows(b.blocks, views, RING_BLOCKS, kept);
    for (const p of holding) {
      const want = atCut.blocks.get(p)!;
      expect(got.get(p), `ring block rows of pool ${p}`).toEqual(copiedPools.includes(p) ? want : want.filter((_, w) => !candles[w]));
    }
    // Window slots have no candle column: every one is copied.
    expect(b.windowSlots.kept.pools.length).toBe(0);
    expect(decodedRows(b.windowSlots, views, WINDOW_SLOTS)).toEqual(atCut.slots);
  }, 60_000);
});

/** Per word of a ring block's rows (every block column after the other), whether it is in a candle column. */
function candleWords(views: EngineViews): boolean[] {
  return blockColumns(views.columnTable, 'block').flatMap((spec) => new Array<boolean>((spec.stride * spec.array.BYTES_PER_ELEMENT) / 4).fill(spec.candles));
}

/**
 * Each pool's rows in a capture, decoded (every block column's words of the row, column after
 * column): those of `kept` (its kept pools) in the columns that are not candles only.
 */
function decodedRows(c: BlockCapture, views: EngineViews, kind: HeldRows, kept: readonly number[] = []): Map<number, number[]> {
  const specs = blockColumns(views.columnTable, kind.scope);
  const out = new Map<number, number[]>([...c.pools, ...kept].map((p) => [p, []]));
  specs.forEach((spec, i) => {
    const perRow = (spec.stride * spec.array.BYTES_PER_ELEMENT) / 4;
    const mask = new Uint32Array(c.columns[i]!.mask.buffer, c.columns[i]!.mask.byteOffset, c.columns[i]!.mask.byteLength >>> 2);
    const words = new Uint32Array(c.columns[i]!.words.buffer, c.columns[i]!.words.byteOffset, c.columns[i]!.words.byteLength >>> 2);
    let n = 0;
    (spec.candles ? [...c.pools] : [...c.pools, ...kept]).forEach((p, k) => {
      const row = out.get(p)!;
      for (let w = 0; w < perRow; w++) {
        const bit = k * perRow + w;
        row.push((mask[bit >>> 5]! >>> (bit & 31)) & 1 ? words[n++]! : 0);
      }
    });
  });
  return out;
}

/** Each pool's rows in the live views, as decodedRows gives them. */
function liveRows(views: EngineViews, kind: HeldRows): Map<number, number[]> {
  const specs = blockColumns(views.columnTable, kind.scope);
  const held = kind.held(views);
  const out = new Map<number, number[]>();
  for (let p = 0; p < views.poolCount; p++) {
    const b = held[p]! - 1;
    if (b < 0) continue;
    const row: number[] = [];
    for (const spec of specs) {
      const perRow = (spec.stride * spec.array.BYTES_PER_ELEMENT) / 4;
      const words = new Uint32Array(spec.array.buffer, spec.array.byteOffset, spec.array.byteLength >>> 2);
      for (let w = 0; w < perRow; w++) row.push(words[b * perRow + w]!);
    }
    out.set(p, row);
  }
  return out;
}
