/**
 * The shared pools of blocks. A ring block holds the candle rings of one pool (every interval's
 * slots); only pools that traded recently hold one. A pool takes a block when it trades while it has
 * none (its newest candles are loaded back from LMDB, so the rings read as if it had never let go)
 * and gives it back once it has been quiet for a while and its candles are stored (shards/tiers.ts).
 * A second block holds a token's 1 s candles the same way, while it trades (they are not stored).
 *
 * Any shard takes and gives blocks, so each free stack is guarded by a lock word (header[0]);
 * holding it covers a handful of array operations. Blocks above the high-water mark were never
 * handed out, so their memory was never touched: resident memory follows the blocks in use.
 */
import type { EngineViews } from './views.js';

/** One pool of blocks: its allocator words, free stack and owners (row + 1, 0 free). */
export interface BlockPool {
  readonly header: Int32Array;
  readonly free: Int32Array;
  readonly owner: Int32Array;
  readonly count: number;
}

/** The ring blocks of pools. */
export function ringBlocks(v: EngineViews): BlockPool {
  return { header: v.blockHeader, free: v.blockFree, owner: v.blockPool, count: v.blockCount };
}

/** The second blocks of tokens. */
export function secondBlocks(v: EngineViews): BlockPool {
  return { header: v.secondBlockHeader, free: v.secondBlockFree, owner: v.secondBlockToken, count: v.secondBlockCount };
}

const LOCK = 0;
const FREE_DEPTH = 1;
const HIGH_WATER = 2;
const IN_USE = 3;
/**
 * 1 while a start is still reading the rows of the ring blocks its snapshot handed out (on a thread
 * of its own: snapshot/block-loader.ts), 2 when that read failed (the service is stopping), 0
 * otherwise. Readers of a block wait while it is 1 (awaitBlockRows); no shard applies a batch
 * before it is 0 (the engine waits too).
 */
const LOADING = 4;

export type BlockRowsState = 'loading' | 'loaded' | 'failed';
const STATE_WORD: Readonly<Record<BlockRowsState, number>> = { loaded: 0, loading: 1, failed: 2 };

/** Marks the blocks handed out as being read in (before any reader can see them), read in, or not readable (waiting readers go on). */
export function markBlockRows(v: EngineViews, state: BlockRowsState): void {
  Atomics.store(v.blockHeader, LOADING, STATE_WORD[state]);
  if (state !== 'loading') Atomics.notify(v.blockHeader, LOADING);
}

/** Waits (blocking this thread) while a start is still reading the ring blocks' rows in; throws when that read failed. */
export function awaitBlockRows(v: EngineViews): void {
  let s: number;
  while ((s = Atomics.load(v.blockHeader, LOADING)) === STATE_WORD.loading) Atomics.wait(v.blockHeader, LOADING, s, 100);
  if (s === STATE_WORD.failed) throw new Error('the ring blocks could not be read at the start: the service is stopping');
}

function lock(h: Int32Array): void {
  while (Atomics.compareExchange(h, LOCK, 0, 1) !== 0) Atomics.wait(h, LOCK, 1, 1);
}

function unlock(h: Int32Array): void {
  Atomics.store(h, LOCK, 0);
  Atomics.notify(h, LOCK, 1);
}

/** Hands `row` a free block of `pool` and records its owner (not the row's own column: the caller sets that under its seqlock); -1 when none is left. */
export function take(pool: BlockPool, row: number): number {
  const h = pool.header;
  lock(h);
  let b = -1;
  const depth = h[FREE_DEPTH]!;
  if (depth > 0) {
    b = pool.free[depth - 1]!;
    h[FREE_DEPTH] = depth - 1;
  } else if (h[HIGH_WATER]! < pool.count) {
    b = h[HIGH_WATER]!;
    h[HIGH_WATER] = b + 1;
  }
  if (b >= 0) {
    h[IN_USE] = h[IN_USE]! + 1;
    Atomics.store(pool.owner, b, row + 1);
  }
  unlock(h);
  return b;
}

/** Returns block b to the free stack of `pool` (the caller has cleared its row's column). */
export function give(pool: BlockPool, b: number): void {
  const h = pool.header;
  lock(h);
  Atomics.store(pool.owner, b, 0);
  pool.free[h[FREE_DEPTH]!] = b;
  h[FREE_DEPTH] = h[FREE_DEPTH]! + 1;
  h[IN_USE] = h[IN_USE]! - 1;
  unlock(h);
}

/** Hands pool p a free ring block (the caller sets poolBlock under p's seqlock); -1 when none is left. */
export function takeBlock(v: EngineViews, p: number): number {
  return take(ringBlocks(v), p);
}

/** Returns ring block b (the caller has cleared poolBlock of its pool). */
export function giveBlock(v: EngineViews, b: number): void {
  give(ringBlocks(v), b);
}

export interface BlockStats {
  readonly total: number;
  readonly used: number;
  readonly free: number;
  /** Blocks ever handed out (their memory is resident). */
  readonly touched: number;
}

export function blockStats(v: EngineViews, pool: BlockPool = ringBlocks(v)): BlockStats {
  const used = Atomics.load(pool.header, IN_USE);
  return { total: pool.count, used, free: pool.count - used, touched: Atomics.load(pool.header, HIGH_WATER) };
}

/** Bytes of shared memory one ring block (or second block, or window slot) takes: every column's row of that scope. */
export function ringBlockBytes(v: EngineViews, scope: 'block' | 'secondBlock' | 'windowSlot' = 'block'): number {
  let n = 0;
  for (const c of v.columnTable) if (c.scope === scope) n += c.stride * c.array.BYTES_PER_ELEMENT;
  return n;
}

/** Blocks ever handed out: every block in use is below it. */
export function blockHighWater(v: EngineViews, pool: BlockPool = ringBlocks(v)): number {
  return Atomics.load(pool.header, HIGH_WATER);
}

/** Empties the allocator (before a snapshot's blocks are loaded, on the main thread with no shard running). */
export function resetBlocks(v: EngineViews, pool: BlockPool = ringBlocks(v), held: Int32Array = v.poolBlock): void {
  pool.header.fill(0);
  pool.owner.fill(0, 0, pool.count);
  held.fill(0);
}

/**
 * Blocks 0..n-1 of `pool` handed to `rows` in order (loading a snapshot: main thread, no shard
 * running), `held` being the rows' column of block + 1 (poolBlock for ring blocks); their ids equal
 * their index in `rows`.
 */
export function assignBlocks(v: EngineViews, rows: ArrayLike<number>, pool: BlockPool = ringBlocks(v), held: Int32Array = v.poolBlock, what: readonly [string, string] = ['pools with candle rings', 'ring blocks']): void {
  // Fresh views (no block ever handed out) are zero already: clearing them would touch every page of the rows' column.
  if (pool.header[HIGH_WATER] !== 0 || pool.header[FREE_DEPTH] !== 0) resetBlocks(v, pool, held);
  if (rows.length > pool.count) throw new RangeError(`the snapshot holds ${rows.length} ${what[0]}; ${pool.count} ${what[1]} are configured`);
  for (let b = 0; b < rows.length; b++) {
    const p = rows[b]!;
    pool.owner[b] = p + 1;
    held[p] = b + 1;
  }
  pool.header[HIGH_WATER] = rows.length;
  pool.header[IN_USE] = rows.length;
}
