/**
 * A snapshot cut without stopping ingest: the main thread copies the columns it writes (static
 * pool and token columns, id bounds, chain clocks) as it hands the cut to the shards, and each shard,
 * when its queue reaches the cut, copies the rows of its own pools and tokens from the columns it
 * writes, plus the candles it still holds for the store. Each shard is held only for its own copy;
 * the main thread goes on ingesting, and later batches queue behind the cut.
 *
 * Rows are handed over as runs: [first, end) id ranges of consecutive pools (or tokens) owned by one
 * shard (ids come in per-chain blocks, so runs are few and long), each shard's rows packed run after
 * run per column.
 */
import type { ColumnSpec, EngineViews } from '../state/views.js';
import { keptColumns, rowBytes } from './format.js';
import type { BlockCapture } from './blocks.js';
import type { DirtyRows } from './dirty.js';

/** [first, end) pairs of row ids, per shard. */
export interface ShardRuns {
  readonly pools: readonly number[];
  readonly tokens: readonly number[];
}

/** A sealed candle chunk a shard holds for the store (lmdb-sink.ts): [pool, interval, chunk start, candles]. */
export type PendingChunkData = readonly [pool: number, interval: number, start: number, data: readonly number[]];

/** What a shard hands back at a cut: its rows of every kept shard-written row column (table order), and its pending candles. */
export interface ShardCapture {
  /**
   * Its rows of every kept shard-written row column (table order): all of its runs, packed run after
   * run; or, in a delta cut (`rows` given), only the rows it changed since the previous cut, packed
   * in the order of `rows`.
   */
  readonly columns: readonly Uint8Array[];
  /** In a delta cut: the pools and tokens of its runs it changed since the previous cut, ascending. */
  readonly rows?: { readonly pools: Int32Array; readonly tokens: Int32Array };
  readonly pending: readonly PendingChunkData[];
  /** Its pools holding a ring block, and the blocks' rows. */
  readonly blocks: BlockCapture;
  /** Milliseconds the shard spent copying (its only pause). */
  readonly heldMs: number;
}

/** Kept columns the shards write per pool or token row, in table order (the order of ShardCapture.columns). */
export function shardRowColumns(table: readonly ColumnSpec[]): ColumnSpec[] {
  return keptColumns(table).filter((c) => c.writer === 'shard' && (c.scope === 'pool' || c.scope === 'token'));
}

/**
 * Splits the pools and tokens that exist at the cut (ids below the bounds) into runs per owning
 * shard. Ids not in use at the cut belong to no shard and stay zero in the snapshot: a pool or token
 * made after it may take such an id (ids come in per-chain blocks), and its owner may write its row
 * before another shard reaches the cut, which must not copy that later state.
 */
export function runsByShard(views: EngineViews, shards: number, shardOfChain: (chain: number) => number, pools: number, tokens: number, tokenExists: (t: number) => boolean): ShardRuns[] {
  const out = Array.from({ length: shards }, () => ({ pools: [] as number[], tokens: [] as number[] }));
  const split = (count: number, ownerOf: (id: number) => number, key: 'pools' | 'tokens') => {
    let start = 0;
    let owner = count > 0 ? ownerOf(0) : -1;
    for (let id = 1; id <= count; id++) {
      const next = id < count ? ownerOf(id) : -2;
      if (next === owner) continue;
      if (owner >= 0) out[owner]![key].push(start, id);
      start = id;
      owner = next;
    }
  };
  split(pools, (p) => (views.poolExists[p] === 1 ? shardOfChain(views.poolChain[p]!) : -1), 'pools');
  split(tokens, (t) => (tokenExists(t) ? shardOfChain(views.tokenChain[t]!) : -1), 'tokens');
  return out;
}

/** Ids in [first, end) pairs. */
export function runRows(runs: readonly number[]): number {
  let n = 0;
  for (let i = 0; i < runs.length; i += 2) n += runs[i + 1]! - runs[i]!;
  return n;
}

/**
 * On a shard at a cut: copies its rows of every shard row column, packed: all of its runs, or with
 * `delta` only the rows `dirty` marks within them (the file is then the previous snapshot with these
 * written over it: write.ts). Either way the marks are cleared: the next cut is relative to this one.
 */
export function captureShardRows(views: EngineViews, runs: ShardRuns, dirty: DirtyRows, delta: boolean): Pick<ShardCapture, 'columns' | 'rows'> {
  const rows = delta ? { pools: dirty.pools.within(runs.pools), tokens: dirty.tokens.within(runs.tokens) } : undefined;
  dirty.clear();
  const columns = shardRowColumns(views.columnTable).map((c) => {
    const size = rowBytes(c);
    const src = new Uint8Array(c.array.buffer, c.array.byteOffset, c.array.byteLength);
    if (rows !== undefined) {
      const ids = c.scope === 'pool' ? rows.pools : rows.tokens;
      const out = new Uint8Array(ids.length * size);
      for (let i = 0; i < ids.length; i++) out.set(src.subarray(ids[i]! * size, (ids[i]! + 1) * size), i * size);
      return out;
    }
    const r = c.scope === 'pool' ? runs.pools : runs.tokens;
    const out = new Uint8Array(runRows(r) * size);
    let at = 0;
    for (let i = 0; i < r.length; i += 2) {
      const from = r[i]! * size;
      const to = r[i + 1]! * size;
      out.set(src.subarray(from, to), at);
      at += to - from;
    }
    return out;
  });
  return rows === undefined ? { columns } : { columns, rows };
}
