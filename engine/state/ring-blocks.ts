/**
 * The shared pool of ring blocks. A block holds the candle rings of one pool (every interval's slots);
 * only pools that traded recently hold one. A pool takes a block when it trades while it has none
 * (its newest candles are loaded back from LMDB, so the rings read as if it had never let go) and
 * gives it back once it has been quiet for a while and its candles are stored (shards/tiers.ts).
 *
 * Any shard takes and gives blocks, so the free stack is guarded by a lock word (blockHeader[0]);
 * holding it covers a handful of array operations. Blocks above the high-water mark were never
 * handed out, so their memory was never touched: resident memory follows the blocks in use.
 */
import type { EngineViews } from './views.js';

const LOCK = 0;
const FREE_DEPTH = 1;
const HIGH_WATER = 2;
const IN_USE = 3;

function lock(h: Int32Array): void {
  while (Atomics.compareExchange(h, LOCK, 0, 1) !== 0) Atomics.wait(h, LOCK, 1, 1);
}

function unlock(h: Int32Array): void {
  Atomics.store(h, LOCK, 0);
  Atomics.notify(h, LOCK, 1);
}

/** Hands pool p a free block and records it in blockPool (not poolBlock: the caller sets that under p's seqlock); -1 when none is left. */
export function takeBlock(v: EngineViews, p: number): number {
  const h = v.blockHeader;
  lock(h);
  let b = -1;
  const depth = h[FREE_DEPTH]!;
  if (depth > 0) {
    b = v.blockFree[depth - 1]!;
    h[FREE_DEPTH] = depth - 1;
  } else if (h[HIGH_WATER]! < v.blockCount) {
    b = h[HIGH_WATER]!;
    h[HIGH_WATER] = b + 1;
  }
  if (b >= 0) {
    h[IN_USE] = h[IN_USE]! + 1;
    Atomics.store(v.blockPool, b, p + 1);
  }
  unlock(h);
  return b;
}

/** Returns block b to the free stack (the caller has cleared poolBlock of its pool). */
export function giveBlock(v: EngineViews, b: number): void {
  const h = v.blockHeader;
  lock(h);
  Atomics.store(v.blockPool, b, 0);
  v.blockFree[h[FREE_DEPTH]!] = b;
  h[FREE_DEPTH] = h[FREE_DEPTH]! + 1;
  h[IN_USE] = h[IN_USE]! - 1;
  unlock(h);
}

export interface BlockStats {
  readonly total: number;
  readonly used: number;
  readonly free: number;
  /** Blocks ever handed out (their memory is resident). */
  readonly touched: number;
}

export function blockStats(v: EngineViews): BlockStats {
  const used = Atomics.load(v.blockHeader, IN_USE);
  return { total: v.blockCount, used, free: v.blockCount - used, touched: Atomics.load(v.blockHeader, HIGH_WATER) };
}

/** Bytes of shared memory one ring block takes (every block column's row). */
export function ringBlockBytes(v: EngineViews): number {
  let n = 0;
  for (const c of v.columnTable) if (c.scope === 'block') n += c.stride * c.array.BYTES_PER_ELEMENT;
  return n;
}

/** Blocks ever handed out: every block in use is below it. */
export function blockHighWater(v: EngineViews): number {
  return Atomics.load(v.blockHeader, HIGH_WATER);
}

/** Empties the allocator (before a snapshot's blocks are loaded, on the main thread with no shard running). */
export function resetBlocks(v: EngineViews): void {
  v.blockHeader.fill(0);
  v.blockPool.fill(0, 0, v.blockCount);
  v.poolBlock.fill(0);
}

/**
 * Blocks 0..n-1 handed to `pools` in order (loading a snapshot: main thread, no shard running);
 * returns their ids, equal to their index in `pools`.
 */
export function assignBlocks(v: EngineViews, pools: ArrayLike<number>): void {
  resetBlocks(v);
  if (pools.length > v.blockCount) throw new RangeError(`the snapshot holds ${pools.length} pools with candle rings; ${v.blockCount} ring blocks are configured`);
  for (let b = 0; b < pools.length; b++) {
    const p = pools[b]!;
    v.blockPool[b] = p + 1;
    v.poolBlock[p] = b + 1;
  }
  v.blockHeader[HIGH_WATER] = pools.length;
  v.blockHeader[IN_USE] = pools.length;
}
