import { assignBlocks, blockStats, giveBlock, takeBlock } from '../state/ring-blocks.js';
import { captureShardBlocks, scatterRows } from './blocks.js';
import { blockColumns } from './format.js';
import { describe, expect, it } from 'vitest';
import { candleValue, setCandleValue } from '../state/candle-record.js';
import { EngineViews } from '../state/views.js';
import type { ColumnSpec } from '../state/views.js';
import { CaptureArena, captureBuffers, captureRoom, captureShardRows, runsByShard, shardRowColumns } from './capture.js';
import { DirtyBits, DirtyRows } from './dirty.js';

/** Puts the shards' packed runs of a column back at their rows (what the snapshot writer does at file offsets). */
function unpack(c: ColumnSpec, rows: number, parts: readonly { runs: readonly number[]; data: Uint8Array }[]): Uint8Array {
  const size = c.array.BYTES_PER_ELEMENT * c.stride;
  const out = new Uint8Array(rows * size);
  for (const { runs, data } of parts) {
    let at = 0;
    for (let i = 0; i < runs.length; i += 2) {
      const n = (runs[i + 1]! - runs[i]!) * size;
      out.set(data.subarray(at, at + n), runs[i]! * size);
      at += n;
    }
  }
  return out;
}

describe('snapshot cut', () => {
  it('gives each shard the runs of the pools and tokens of its chains that exist, and none of the ids not in use', () => {
    const v = EngineViews.create({ pools: 32, tokens: 32, chains: 4 });
    // Pools 0-3 on chain 0, 4-5 on chain 1, 6-7 not in use (a later pool of either chain may take them), 8-9 on chain 2.
    const chainOf = [0, 0, 0, 0, 1, 1, -1, -1, 2, 2];
    chainOf.forEach((c, p) => {
      if (c < 0) return;
      v.poolExists[p] = 1;
      v.poolChain[p] = c;
    });
    v.tokenChain.set([0, 1, 0, 0, 2]);
    const tokenExists = (t: number) => t !== 3;
    const runs = runsByShard(v, 2, (c) => c % 2, 10, 5, tokenExists);
    expect(runs[0]).toEqual({ pools: [0, 4, 8, 10], tokens: [0, 1, 2, 3, 4, 5] });
    expect(runs[1]).toEqual({ pools: [4, 6], tokens: [1, 2] });
  });

  it('packs each shard its rows and puts them back in place, rows of no shard left zero', () => {
    const v = EngineViews.create({ pools: 16, tokens: 16, chains: 2 });
    for (let p = 0; p < 6; p++) {
      v.poolExists[p] = p === 3 ? 0 : 1;
      v.poolChain[p] = p < 2 ? 0 : 1;
      v.liquidityUsd[p] = 100 + p;
      v.reserveRaw.fill(p + 7, p * 8, (p + 1) * 8);
    }
    const runs = runsByShard(v, 2, (c) => c, 6, 0, () => false);
    const captures = runs.map((r) => captureShardRows(v, r, new DirtyRows(6, 0), false).columns);
    const columns = shardRowColumns(v.columnTable);
    const reserve = columns.findIndex((c) => c.name === 'liquidityUsd');
    const raw = columns.findIndex((c) => c.name === 'reserveRaw');
    const back = (i: number) => unpack(columns[i]!, 6, runs.map((r, s) => ({ runs: r.pools, data: captures[s]![i]! }))).buffer;
    expect([...new Float64Array(back(reserve))]).toEqual([100, 101, 102, 0, 104, 105]);
    const words = new Uint32Array(back(raw));
    expect(words[3 * 8]).toBe(0);
    expect(words[5 * 8 + 7]).toBe(12);
  });

  it('in a delta cut copies only the rows marked since the last cut, within its runs, and clears the marks', () => {
    const v = EngineViews.create({ pools: 80, tokens: 8, chains: 2 });
    for (let p = 0; p < 70; p++) {
      v.poolExists[p] = 1;
      v.liquidityUsd[p] = 1000 + p;
    }
    const dirty = new DirtyRows(80, 8);
    // Marks across word boundaries, one outside the runs (id 75: no pool there at the cut).
    for (const p of [0, 31, 32, 33, 63, 64, 69, 75]) dirty.pools.mark(p);
    const runs = { pools: [0, 40, 60, 70], tokens: [] };
    const cut = captureShardRows(v, runs, dirty, true);
    expect([...cut.rows!.pools]).toEqual([0, 31, 32, 33, 63, 64, 69]);
    const reserve = shardRowColumns(v.columnTable).findIndex((c) => c.name === 'liquidityUsd');
    expect([...new Float64Array(cut.columns[reserve]!.slice().buffer)]).toEqual([1000, 1031, 1032, 1033, 1063, 1064, 1069]);
    expect(dirty.pools.has(31)).toBe(false);
    expect([...captureShardRows(v, runs, dirty, true).rows!.pools]).toEqual([]);
  });

  it('keeps capture buffers at what delta cuts copy: a full cut\'s row buffers are given back at the next delta cut, and grow again when a cut needs more', () => {
    const pools = 4000;
    const v = EngineViews.create({ pools, tokens: 8, chains: 1 });
    for (let p = 0; p < pools; p++) {
      v.poolExists[p] = 1;
      v.liquidityUsd[p] = p + 0.5;
    }
    const runs = { pools: [0, pools], tokens: [] };
    const poolRowBytes = shardRowColumns(v.columnTable).reduce((n, c) => n + (c.scope === 'pool' ? c.stride * c.array.BYTES_PER_ELEMENT : 0), 0);
    const columns = shardRowColumns(v.columnTable).length;
    const arena = new CaptureArena();
    const dirty = new DirtyRows(pools, 8);
    const reserve = shardRowColumns(v.columnTable).findIndex((c) => c.name === 'liquidityUsd');
    const cut = (marked: readonly number[], delta: boolean) => {
      dirty.pools.markAll(marked);
      const out = captureShardRows(v, runs, dirty, delta, arena);
      const held = captureBuffers(v.columnTable, arena);
      return { out, held };
    };
    // The full cut: one copy of every row.
    const full = cut([], false);
    expect(full.held.rows).toBeGreaterThanOrEqual(pools * poolRowBytes);
    // Delta cuts copying 10 rows: the buffers follow them (with room), whatever the full cut held.
    const ten = Array.from({ length: 10 }, (_, i) => i * 397);
    const small = cut(ten, true);
    expect(small.held.released).toBeGreaterThanOrEqual(pools * poolRowBytes);
    expect(small.held.rows).toBeLessThanOrEqual(captureRoom(10 * poolRowBytes) + 8 * columns);
    expect([...new Float64Array(small.out.columns[reserve]!.slice().buffer)]).toEqual(ten.map((p) => p + 0.5));
    // The same again: nothing made anew, nothing let go of (the same buffer under the rows).
    const again = cut(ten, true);
    expect(again.held.released).toBe(0);
    expect(again.out.columns[reserve]!.buffer).toBe(small.out.columns[reserve]!.buffer);
    // A cut needing more grows them, its rows all there.
    const many = Array.from({ length: 1000 }, (_, i) => i * 3);
    const grown = cut(many, true);
    expect(grown.held.rows).toBeGreaterThanOrEqual(1000 * poolRowBytes);
    expect([...new Float64Array(grown.out.columns[reserve]!.slice().buffer)]).toEqual(many.map((p) => p + 0.5));
    // Cuts needing less than half keep the room of the largest of the last four delta cuts...
    for (let i = 0; i < 3; i++) expect(cut(ten, true).held.released).toBe(0);
    // ...and once it is out of them, give it back.
    const shrunk = cut(ten, true);
    expect(shrunk.held.released).toBeGreaterThan(0);
    expect(shrunk.held.rows).toBeLessThanOrEqual(captureRoom(10 * poolRowBytes) + 8 * columns);
    expect([...new Float64Array(shrunk.out.columns[reserve]!.slice().buffer)]).toEqual(ten.map((p) => p + 0.5));
  });

  it('marks past the size it was made with grow the bit set', () => {
    const bits = new DirtyBits(10);
    bits.mark(5);
    bits.mark(1000);
    expect([...bits.within([0, 2000])]).toEqual([5, 1000]);
    expect([...bits.within([6, 1000])]).toEqual([]);
  });

  it('hands each shard the ring blocks of its own pools, and a load gives them blocks 0..n-1 with the same rows', () => {
    const v = EngineViews.create({ pools: 16, tokens: 16, chains: 2, blocks: 8 });
    const slots = v.rings[0]!.slots;
    const hot = [9, 2, 5, 12];
    for (const p of hot) {
      v.poolExists[p] = 1;
      v.poolChain[p] = p % 2;
      const b = takeBlock(v, p);
      v.poolBlock[p] = b + 1;
      for (let s = b * slots; s < (b + 1) * slots; s++) setCandleValue(v.rings[0]!, s, 'open0', p + 0.5);
    }
    // Pool 2 gave its block back: it is not captured.
    giveBlock(v, v.poolBlock[2]! - 1);
    v.poolBlock[2] = 0;
    const even = captureShardBlocks(v, (c) => c === 0);
    const odd = captureShardBlocks(v, (c) => c === 1);
    expect([...even.pools]).toEqual([12]);
    expect([...odd.pools]).toEqual([9, 5]);
    const candles = blockColumns(v.columnTable).findIndex((c) => c.name === 'ring.1m.candles');
    // Only the non-zero 4-byte words are handed over: of pool 9's and 5's 1m candles, the high half
    // of each open0 (9.5 and 5.5 have a zero low half), none of the empty fields or columns.
    const odd0 = odd.columns[candles]!;
    expect(odd0.words.byteLength).toBe(2 * slots * 4);
    expect(new Uint32Array(odd0.words.slice().buffer)[slots]).toBe(new Uint32Array(Float64Array.of(5.5).buffer)[1]);
    expect(odd.columns.reduce((n, c) => n + c.words.byteLength, 0)).toBe(2 * slots * 4);
    const w = EngineViews.create({ pools: 16, tokens: 16, chains: 2, blocks: 8 });
    assignBlocks(w, [12, 9, 5]);
    expect([w.poolBlock[12], w.poolBlock[9], w.poolBlock[5], w.poolBlock[2]]).toEqual([1, 2, 3, 0]);
    // Loaded as a start does (even shard first, then odd): every block column's rows equal the original ones, zeros included.
    const words = (u: Uint8Array) => new Uint32Array(u.slice().buffer);
    blockColumns(w.columnTable).forEach((c, i) => {
      scatterRows(c, 0, words(even.columns[i]!.mask), words(even.columns[i]!.words));
      scatterRows(c, even.pools.length, words(odd.columns[i]!.mask), words(odd.columns[i]!.words));
    });
    for (const c of blockColumns(w.columnTable)) {
      const from = v.columnTable.find((x) => x.name === c.name)!;
      for (const p of [12, 9, 5]) {
        const row = (spec: ColumnSpec, b: number) => [...spec.array.subarray(b * spec.stride, (b + 1) * spec.stride)];
        expect(row(c, w.poolBlock[p]! - 1), `${c.name} of pool ${p}`).toEqual(row(from, v.poolBlock[p]! - 1));
      }
    }
    expect(candleValue(w.rings[0]!, 2 * slots, 'open0')).toBe(5.5);
    expect(blockStats(w)).toEqual({ total: 8, used: 3, free: 5, touched: 3 });
    expect(takeBlock(w, 2)).toBe(3);
  });
});
