/**
 * The shared pools of blocks. A ring block holds the candle rings of one pool (every interval's
 * slots); only pools that traded recently hold one. A pool takes a block when it trades while it has
 * none (its newest candles are loaded back from LMDB, so the rings read as if it had never let go)
 * and gives it back once it has been quiet for a while and its candles are stored (shards/tiers.ts).
 * A second block holds a token's 1 s candles the same way, while it trades (they are not stored).
 *
 * Any shard takes and gives blocks, so each allocator is guarded by a lock word (header[0]);
 * holding it covers a short scan of its free bits. A take hands out the lowest free block, so the
 * blocks in use gather at the bottom and those at the top empty as their pools go quiet; blocks at
 * or above the high-water mark hold no memory (never touched, or their pages given back to the
 * system by releaseFreeTail, which then lowers the mark; but for the page the mark falls in), so
 * resident memory follows the blocks in use rather than the most ever held at once (a backfill holds
 * far more than a live service).
 */
import { releasePages } from '../memory.js';
import type { ColumnSpec, EngineViews } from './views.js';

/**
 * One pool of blocks: its allocator words, free bits and owners (row + 1, 0 free). Invariant: `free`'s
 * first bitWords(count) words hold a bit per block, set for the free blocks below the high-water mark
 * and clear elsewhere; the rest of `free` is unused. Written only under the lock word.
 */
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
/** The lowest word of the free bits that may have a bit set (every word below it is 0). */
const LOWEST_FREE_WORD = 1;
/** Blocks below it were handed out at some time and hold memory; none at or above it is in use. */
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

/** Words of free bits of a pool of `count` blocks. */
function bitWords(count: number): number {
  return (count + 31) >>> 5;
}

/**
 * Hands `row` the lowest free block of `pool` and records its owner (not the row's own column: the
 * caller sets that under its seqlock); -1 when none is left. A block at the high-water mark comes
 * with zeroed memory, one below it as its last owner left it: the taker sets what it reads.
 */
export function take(pool: BlockPool, row: number): number {
  const h = pool.header;
  lock(h);
  let b = -1;
  const high = h[HIGH_WATER]!;
  if (h[IN_USE]! < high) {
    // A free block below the mark: the lowest one.
    const bits = pool.free;
    const words = bitWords(high);
    let w = h[LOWEST_FREE_WORD]!;
    while (w < words && bits[w] === 0) w++;
    const word = bits[w]!;
    const bit = 31 - Math.clz32(word & -word);
    b = (w << 5) + bit;
    bits[w] = word & ~(1 << bit);
    h[LOWEST_FREE_WORD] = w;
  } else if (high < pool.count) {
    b = high;
    h[HIGH_WATER] = high + 1;
  }
  if (b >= 0) {
    h[IN_USE] = h[IN_USE]! + 1;
    Atomics.store(pool.owner, b, row + 1);
  }
  unlock(h);
  return b;
}

/** Returns block b to `pool` (the caller has cleared its row's column). */
export function give(pool: BlockPool, b: number): void {
  const h = pool.header;
  lock(h);
  Atomics.store(pool.owner, b, 0);
  const w = b >>> 5;
  pool.free[w] = pool.free[w]! | (1 << (b & 31));
  if (w < h[LOWEST_FREE_WORD]!) h[LOWEST_FREE_WORD] = w;
  h[IN_USE] = h[IN_USE]! - 1;
  unlock(h);
}

/**
 * Gives the system back the memory of the free blocks above the highest block in use and lowers
 * the high-water mark to it: `columns` are the pool's columns of one row per block but its own
 * (scopeColumns; their memory past the new mark is released in whole pages: memory.ts releasePages). Blocks handed out from the mark again come zeroed (those sharing the mark's page with
 * blocks in use, as their last owner left them: the taker sets what it reads). Any thread; returns
 * the blocks the mark went down by. Holds the lock for the scan and the system calls: call it after
 * a sweep that freed blocks, not per take.
 */
export function releaseFreeTail(pool: BlockPool, columns: readonly ArrayBufferView[], minBlocks = 1): number {
  const h = pool.header;
  lock(h);
  try {
    const high = h[HIGH_WATER]!;
    let top = high;
    while (top > 0 && pool.owner[top - 1] === 0) top--;
    if (high - top < Math.max(1, minBlocks)) return 0;
    for (const c of columns) {
      const perBlock = c.byteLength / pool.count;
      // The blocks from the mark up are free too (zeroed, or never touched): the page the mark falls in goes as well.
      releasePages(c, top * perBlock, high * perBlock, true);
    }
    // The blocks from the new mark up hold no free bit any more.
    const bits = pool.free;
    for (let b = top; b < high; ) {
      if ((b & 31) === 0 && b + 32 <= high) {
        bits[b >>> 5] = 0;
        b += 32;
      } else {
        bits[b >>> 5] = bits[b >>> 5]! & ~(1 << (b & 31));
        b++;
      }
    }
    h[HIGH_WATER] = top;
    return high - top;
  } finally {
    unlock(h);
  }
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
  /** Blocks below the high-water mark: those holding memory (in use, or free and not yet given back). */
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

/** The high-water mark: every block in use is below it. */
export function blockHighWater(v: EngineViews, pool: BlockPool = ringBlocks(v)): number {
  return Atomics.load(pool.header, HIGH_WATER);
}

/** Empties the allocator (before a snapshot's blocks are loaded, on the main thread with no shard running). */
export function resetBlocks(v: EngineViews, pool: BlockPool = ringBlocks(v), held: Int32Array = v.poolBlock): void {
  pool.header.fill(0);
  pool.owner.fill(0, 0, pool.count);
  pool.free.fill(0, 0, bitWords(pool.count));
  held.fill(0);
}

/**
 * Blocks 0..n-1 of `pool` handed to `rows` in order (loading a snapshot: main thread, no shard
 * running), `held` being the rows' column of block + 1 (poolBlock for ring blocks); their ids equal
 * their index in `rows`.
 */
export function assignBlocks(v: EngineViews, rows: ArrayLike<number>, pool: BlockPool = ringBlocks(v), held: Int32Array = v.poolBlock, what: readonly [string, string] = ['pools with candle rings', 'ring blocks']): void {
  // Fresh views (no block ever handed out) are zero already: clearing them would touch every page of the rows' column.
  if (pool.header[HIGH_WATER] !== 0) resetBlocks(v, pool, held);
  if (rows.length > pool.count) throw new RangeError(`the snapshot holds ${rows.length} ${what[0]}; ${pool.count} ${what[1]} are configured`);
  for (let b = 0; b < rows.length; b++) {
    const p = rows[b]!;
    pool.owner[b] = p + 1;
    held[p] = b + 1;
  }
  pool.header[HIGH_WATER] = rows.length;
  pool.header[IN_USE] = rows.length;
}

/** The columns of one row per block of `scope` but `pool`'s own (its owners and free bits): what a block holds, which releaseFreeTail gives back. */
export function scopeColumns(v: EngineViews, scope: 'block' | 'secondBlock' | 'windowSlot', pool: BlockPool): ColumnSpec['array'][] {
  return v.columnTable.filter((c) => c.scope === scope && c.array !== pool.owner && c.array !== pool.free).map((c) => c.array);
}

/** Blocks of `scope` worth RELEASE_MIN_BYTES: a free tail shorter than that is left as it is (not worth the system calls). */
export function releaseMinBlocks(v: EngineViews, scope: 'block' | 'secondBlock' | 'windowSlot'): number {
  return Math.max(1, Math.ceil(RELEASE_MIN_BYTES / ringBlockBytes(v, scope)));
}

/** The least memory a free tail is given back for: a huge page. */
const RELEASE_MIN_BYTES = 2 * 1024 * 1024;
