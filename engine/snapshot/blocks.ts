/**
 * Ring blocks in a snapshot. Block ids mean nothing across a restart, so a snapshot keeps, per pool
 * that held a block at the cut, the pool id and the block's rows; a load hands those pools blocks
 * 0..n-1 in file order (one large read per column), and a rollback behind the snapshot takes fresh
 * blocks for the pools it restores.
 */
import { readSync } from 'node:fs';
import { assignBlocks, blockHighWater, takeBlock } from '../state/ring-blocks.js';
import type { ColumnSpec, EngineViews } from '../state/views.js';
import { blockColumns, rowBytes, type BlocksSection } from './format.js';
import { CaptureArena, gatherRows } from './capture.js';

/** What one shard hands over at a cut: the pools of its chains holding a block, and each block column's rows for them. */
export interface BlockCapture {
  readonly pools: Int32Array;
  readonly columns: readonly Uint8Array[];
}

/** On a shard at a cut: copies the blocks of the pools whose chain it owns. */
export function captureShardBlocks(v: EngineViews, ownsChain: (chain: number) => boolean, arena = new CaptureArena()): BlockCapture {
  const high = blockHighWater(v);
  const blocks: number[] = [];
  const pools: number[] = [];
  for (let b = 0; b < high; b++) {
    const p = v.blockPool[b]! - 1;
    if (p >= 0 && ownsChain(v.poolChain[p]!)) {
      blocks.push(b);
      pools.push(p);
    }
  }
  const columns = blockColumns(v.columnTable).map((c) => gatherRows(c.array, c.stride, blocks, arena.bytes(c.name, blocks.length * rowBytes(c))));
  return { pools: Int32Array.from(pools), columns };
}

/** Bytes the blocks section takes for `pools` pools (header offsets aside). */
export function blockSectionBytes(table: readonly ColumnSpec[], pools: number): number {
  let n = pools * 4;
  for (const c of blockColumns(table)) n += pools * rowBytes(c);
  return n;
}

function readExactly(fd: number, into: Uint8Array, offset: number): void {
  let done = 0;
  while (done < into.byteLength) {
    const n = readSync(fd, into, done, into.byteLength - done, offset + done);
    if (n === 0) throw new RangeError(`snapshot ends early at byte ${offset + done}`);
    done += n;
  }
}

function poolsOf(fd: number, section: BlocksSection): Int32Array {
  const pools = new Int32Array(section.pools);
  readExactly(fd, new Uint8Array(pools.buffer), section.offset);
  return pools;
}

/** At a start (main thread, no shard running): hands the snapshot's pools blocks 0..n-1 and reads their rows in. */
export function loadBlocks(fd: number, section: BlocksSection, v: EngineViews): void {
  const pools = poolsOf(fd, section);
  assignBlocks(v, pools);
  const byName = new Map(v.columnTable.map((c) => [c.name, c]));
  for (const col of section.columns) {
    const spec = byName.get(col.name)!;
    readExactly(fd, new Uint8Array(spec.array.buffer, spec.array.byteOffset, col.bytes), col.offset);
  }
}

/**
 * On the shard owning `pools` (a rollback, after it gave their blocks back): each of them that held a
 * block at the cut takes one and gets its rows back. Call inside the pools' seqlocks.
 */
export function restoreBlocks(fd: number, section: BlocksSection, v: EngineViews, pools: readonly number[]): void {
  if (section.pools === 0 || pools.length === 0) return;
  const wanted = new Set(pools);
  const inFile = poolsOf(fd, section);
  const byName = new Map(v.columnTable.map((c) => [c.name, c]));
  const columns = section.columns.map((col) => ({ col, spec: byName.get(col.name)! }));
  for (let i = 0; i < inFile.length; i++) {
    const p = inFile[i]!;
    if (!wanted.has(p)) continue;
    const b = takeBlock(v, p);
    if (b < 0) throw new RangeError(`no ring block free to restore pool ${p}`);
    for (const { col, spec } of columns) {
      const size = rowBytes(spec);
      readExactly(fd, new Uint8Array(spec.array.buffer, spec.array.byteOffset + b * size, size), col.offset + i * size);
    }
    v.poolBlock[p] = b + 1;
  }
}
