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
import type { DirtyBits, DirtyRows } from './dirty.js';

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
  /** Its pools holding a window slot, and the slots' rows. */
  readonly windowSlots: BlockCapture;
  /** Milliseconds the shard was held when the cut reached it (its changed rows and pending candles copied: shard-cut.ts). */
  readonly heldMs: number;
  /** The longest slice of its ring blocks' and window slots' copy after that, in milliseconds. */
  readonly sliceMs: number;
  /** Milliseconds the shard spent copying for this cut in all. */
  readonly copyMs: number;
  /** Bytes the shard's capture buffers hold after this cut (row columns, block columns), and those it let go of at it. */
  readonly buffers: CaptureBuffers;
}

export interface CaptureBuffers {
  readonly rows: number;
  readonly blocks: number;
  readonly released: number;
}

/** What `arena` holds for the row columns and for the rest (the block columns), and let go of at this cut. */
export function captureBuffers(table: readonly ColumnSpec[], arena: CaptureArena): CaptureBuffers {
  const rows = arena.heldBytes(new Set(shardRowColumns(table).map((c) => c.name)));
  return { rows, blocks: arena.heldBytes() - rows, released: arena.released };
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
  // Held on the main thread, this walks every id in use: the owner of each chain looked up once, no call per pool.
  const ownerOfChain = new Int32Array(views.capacity.chains);
  for (let c = 0; c < ownerOfChain.length; c++) ownerOfChain[c] = shardOfChain(c);
  const exists = views.poolExists;
  const chainOf = views.poolChain;
  let start = 0;
  let owner = pools > 0 ? (exists[0] === 1 ? ownerOfChain[chainOf[0]!]! : -1) : -1;
  for (let id = 1; id <= pools; id++) {
    const next = id < pools ? (exists[id] === 1 ? ownerOfChain[chainOf[id]!]! : -1) : -2;
    if (next === owner) continue;
    if (owner >= 0) out[owner]!.pools.push(start, id);
    start = id;
    owner = next;
  }
  const tokenChain = views.tokenChain;
  start = 0;
  owner = tokens > 0 ? (tokenExists(0) ? ownerOfChain[tokenChain[0]!]! : -1) : -1;
  for (let id = 1; id <= tokens; id++) {
    const next = id < tokens ? (tokenExists(id) ? ownerOfChain[tokenChain[id]!]! : -1) : -2;
    if (next === owner) continue;
    if (owner >= 0) out[owner]!.tokens.push(start, id);
    start = id;
    owner = next;
  }
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
export function captureShardRows(views: EngineViews, runs: ShardRuns, dirty: DirtyRows, delta: boolean, arena = new CaptureArena()): Pick<ShardCapture, 'columns' | 'rows'> {
  const rows = delta ? { pools: dirty.pools.within(runs.pools), tokens: dirty.tokens.within(runs.tokens) } : undefined;
  dirty.clear();
  // The start of the shard's cut (its ring blocks are copied next, into the same arena).
  arena.beginCut(delta);
  const columns = shardRowColumns(views.columnTable).map((c) => {
    if (rows !== undefined) return gatherRows(c.array, c.stride, c.scope === 'pool' ? rows.pools : rows.tokens, arena.bytes(c.name, (c.scope === 'pool' ? rows.pools : rows.tokens).length * rowBytes(c)));
    const size = rowBytes(c);
    const src = new Uint8Array(c.array.buffer, c.array.byteOffset, c.array.byteLength);
    const r = c.scope === 'pool' ? runs.pools : runs.tokens;
    const out = arena.bytes(c.name, runRows(r) * size);
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

/** The index of `id` in `ids` (ascending, holding it). */
function indexOf(ids: Int32Array, id: number): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The pool and token rows not copied yet at a cut still copying: marks reused from cut to cut (every one is gone once a copy ends). */
export interface RowMarks {
  readonly pools: DirtyBits;
  readonly tokens: DirtyBits;
}

/**
 * A delta cut's changed rows copied after the cut: a slice at a time (`step`), and a row about to be
 * written first (`beforePool`, `beforeToken`). Invariant: a row of the cut marked in `waiting` holds,
 * in the live columns, what it held at the cut; its copy goes straight to its place in the packed
 * buffers (its index among the cut's rows, ascending ids), so nothing is kept aside. `waiting` starts
 * as the writer's marks at the cut (marks of ids outside the cut's runs are passed over).
 */
export class ChangedRowsCopy {
  readonly rows: { readonly pools: Int32Array; readonly tokens: Int32Array };
  readonly columns: readonly Uint8Array[];
  private readonly specs: readonly ColumnSpec[];
  /** The packed buffers as the columns' own element type. */
  private readonly outs: readonly ColumnSpec['array'][];
  private readonly poolColumns: readonly number[];
  private readonly tokenColumns: readonly number[];
  /** Rows gone through by `step`: the pools', then the tokens'. */
  private next = 0;

  constructor(
    views: EngineViews,
    runs: ShardRuns,
    dirty: DirtyRows,
    arena: CaptureArena,
    private readonly waiting: RowMarks,
  ) {
    this.rows = { pools: dirty.pools.within(runs.pools), tokens: dirty.tokens.within(runs.tokens) };
    // The marks themselves, copied word by word: those outside the runs are passed over (and cleared once done).
    waiting.pools.copyFrom(dirty.pools);
    waiting.tokens.copyFrom(dirty.tokens);
    dirty.clear();
    arena.beginCut(true);
    this.specs = shardRowColumns(views.columnTable);
    this.columns = this.specs.map((c) => arena.bytes(c.name, (c.scope === 'pool' ? this.rows.pools : this.rows.tokens).length * rowBytes(c)));
    this.outs = this.specs.map((c, k) => viewAs(c.array, this.columns[k]!));
    this.poolColumns = this.specs.flatMap((c, k) => (c.scope === 'pool' ? [k] : []));
    this.tokenColumns = this.specs.flatMap((c, k) => (c.scope === 'token' ? [k] : []));
  }

  get done(): boolean {
    return this.next === this.rows.pools.length + this.rows.tokens.length;
  }

  /** Pool p is about to be written: its row as of the cut is copied first when it is one of the cut's and not copied yet. */
  beforePool(p: number): void {
    if (!this.waiting.pools.has(p)) return;
    this.waiting.pools.unmark(p);
    const at = indexOf(this.rows.pools, p);
    if (this.rows.pools[at] === p) this.copy(this.poolColumns, p, at);
  }

  /** The same for token t. */
  beforeToken(t: number): void {
    if (!this.waiting.tokens.has(t)) return;
    this.waiting.tokens.unmark(t);
    const at = indexOf(this.rows.tokens, t);
    if (this.rows.tokens[at] === t) this.copy(this.tokenColumns, t, at);
  }

  /** Copies rows in order until all are or `deadline` (performance.now()) has passed; true once all are. */
  step(deadline: number): boolean {
    const pools = this.rows.pools.length;
    const total = pools + this.rows.tokens.length;
    while (this.next < total) {
      for (const end = Math.min(total, this.next + 256); this.next < end; this.next++) {
        const i = this.next;
        if (i < pools) {
          const p = this.rows.pools[i]!;
          if (!this.waiting.pools.has(p)) continue;
          this.waiting.pools.unmark(p);
          this.copy(this.poolColumns, p, i);
        } else {
          const t = this.rows.tokens[i - pools]!;
          if (!this.waiting.tokens.has(t)) continue;
          this.waiting.tokens.unmark(t);
          this.copy(this.tokenColumns, t, i - pools);
        }
      }
      if (performance.now() >= deadline) break;
    }
    if (!this.done) return false;
    // Marks of ids outside the runs (not in use at the cut) are left: none is needed any more.
    this.waiting.pools.clear();
    this.waiting.tokens.clear();
    return true;
  }

  /** Row `id` of the columns `which` into place `at` of their packed buffers. */
  private copy(which: readonly number[], id: number, at: number): void {
    for (const k of which) copyRow(this.specs[k]!.array, this.specs[k]!.stride, id, this.outs[k]!, at);
  }
}

/**
 * Rows `ids` of a column (`stride` elements each), packed in that order into `into`: short rows
 * element by element in the column's own type (a view and a copy call per row would cost more than
 * the copy), long ones (ring slots) with a copy call each.
 */
export function gatherRows(array: ColumnSpec['array'], stride: number, ids: ArrayLike<number>, into: Uint8Array): Uint8Array {
  const out = viewAs(array, into);
  for (let i = 0; i < ids.length; i++) copyRow(array, stride, ids[i]!, out, i);
  return into;
}

/** `into`'s bytes as an array of `like`'s element type. */
function viewAs(like: ColumnSpec['array'], into: Uint8Array): ColumnSpec['array'] {
  return new (like.constructor as new (b: ArrayBufferLike, offset: number, length: number) => ColumnSpec['array'])(into.buffer, into.byteOffset, into.byteLength / like.BYTES_PER_ELEMENT);
}

/** Row `id` of a column (`stride` elements) into row `at` of `out`: a short row element by element, a long one with one copy call. */
function copyRow(array: ColumnSpec['array'], stride: number, id: number, out: ColumnSpec['array'], at: number): void {
  if (stride >= LONG_ROW) {
    out.set(array.subarray(id * stride, (id + 1) * stride), at * stride);
    return;
  }
  for (let e = 0, from = id * stride, to = at * stride; e < stride; e++) out[to + e] = array[from + e]!;
}

/** Rows of at least this many elements are copied with one call each (a view per row costs less than the loop). */
const LONG_ROW = 32;

/** Delta cuts whose needs a buffer is kept for: the largest of them, with ROOM more. */
export const KEPT_CUTS = 4;
/** Room a buffer is made with over what it was made for (fewer fresh buffers as a need grows slowly). */
const ROOM = 1.25;
/** A buffer holding more than this many times the room of what the kept cuts needed is made anew at that size. */
const SHRINK_ABOVE = 2;

/** Bytes of a buffer made for `need` bytes: ROOM more, whole 8-byte words. */
export function captureRoom(need: number): number {
  return Math.ceil((need * ROOM) / 8) * 8;
}

interface ArenaBuffer {
  buffer: SharedArrayBuffer;
  /** What the last KEPT_CUTS delta cuts asked of it (oldest first). */
  readonly needs: number[];
}

/**
 * A shard's capture buffers, one per column, kept from one cut to the next (shared memory: the main
 * thread writes the snapshot from them without a copy). Invariant: the shard writes them only while
 * capturing, and it captures again only after the snapshot of the previous cut was written (or its
 * write failed): the engine starts no cut while one is written.
 *
 * Why kept: touching fresh memory costs more than the copy (7–8 s per GiB on a small server against
 * about 0.5 s for the copy), and the ring blocks of the pools trading since the previous cut are copied at every cut.
 * What is kept follows what delta cuts need: a buffer holds the room of the largest need of the last
 * KEPT_CUTS delta cuts (ROOM more), and one holding more than SHRINK_ABOVE times that is made anew
 * at that size. A full cut (the first of a run: every row) is not one of them: the first delta cut
 * after it gives its row buffers back down to the rows that cut copies. A buffer that is too small
 * grows to ROOM times what the cut needs. So a fresh buffer is made only when a need grows by more
 * than ROOM or falls below half of what the recent cuts needed: its pages cost about what the
 * copies into it cost while the needs stay in that band, and nothing otherwise.
 */
export class CaptureArena {
  private readonly buffers = new Map<string, ArenaBuffer>();
  private delta = false;
  private releasedNow = 0;

  /** Starts a cut: `delta` when it copies only the rows changed since the previous one. */
  beginCut(delta: boolean): void {
    this.delta = delta;
    this.releasedNow = 0;
  }

  /** `n` bytes for column `name`, 8-byte aligned, contents undefined. */
  bytes(name: string, n: number): Uint8Array {
    let b = this.buffers.get(name);
    if (b === undefined) {
      b = { buffer: new SharedArrayBuffer(captureRoom(n)), needs: [] };
      this.buffers.set(name, b);
    }
    if (this.delta) {
      b.needs.push(n);
      if (b.needs.length > KEPT_CUTS) b.needs.shift();
    }
    const keep = this.delta ? captureRoom(Math.max(...b.needs)) : 0;
    if (b.buffer.byteLength < n) {
      this.releasedNow += b.buffer.byteLength;
      b.buffer = new SharedArrayBuffer(Math.max(captureRoom(n), keep));
    } else if (this.delta && b.buffer.byteLength > SHRINK_ABOVE * keep) {
      this.releasedNow += b.buffer.byteLength;
      b.buffer = new SharedArrayBuffer(keep);
    }
    return new Uint8Array(b.buffer, 0, n);
  }

  /** Bytes the buffers hold now; with `names`, only those columns' buffers. */
  heldBytes(names?: ReadonlySet<string>): number {
    let n = 0;
    for (const [name, b] of this.buffers) if (names === undefined || names.has(name)) n += b.buffer.byteLength;
    return n;
  }

  /** Bytes of buffers let go of since the cut began (garbage until this thread and the main thread collect). */
  get released(): number {
    return this.releasedNow;
  }
}
