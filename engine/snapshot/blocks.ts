/**
 * Ring blocks in a snapshot. Block ids mean nothing across a restart, so a snapshot keeps, per pool
 * that held a block at the cut, the pool id and the block's rows; a load hands those pools blocks
 * 0..n-1 in file order, and a rollback behind the snapshot takes fresh blocks for the pools it restores.
 *
 * The rows are kept without their zero words (format version 4): a ring holds a slot per candle of
 * its span, and most slots of a pool that trades a few times a day are empty. Each shard hands over,
 * per block column, its pools' rows read as 4-byte words: a bit per word (set: the word is not zero)
 * and the non-zero words in order. A load writes only those words into the (fresh, zeroed) shared
 * memory, so the pages of empty slots are never touched. Version 3 files hold the rows whole.
 *
 * After a shard's first cut, it copies the candle rows (most of a ring block) only of the pools whose
 * candles it wrote since its previous cut; those of the others are in the file of that cut, and the
 * writer takes them from there (HeldRowsCopy, write.ts KeptColumn).
 *
 * Window slots (state/window-slots.ts) are kept the same way, in a section of their own: per pool
 * holding a slot at the cut, its id and the slot's rows.
 */
import { readSync } from 'node:fs';
import { assignBlocks, blockHighWater, ringBlocks, take, type BlockPool } from '../state/ring-blocks.js';
import type { ColumnSpec, EngineViews } from '../state/views.js';
import { windowSlots } from '../state/window-slots.js';
import { blockColumns, ringFieldColumns, rowBytes, type BlockColumnSection, type BlocksSection, type BlockSegment } from './format.js';
import { CANDLE_U32_WORDS, type CandleField } from '../state/candle-record.js';
import { CaptureArena } from './capture.js';
import type { DirtyBits } from './dirty.js';

/** A pool of rows held per pool, kept in a snapshot per pool holding one: ring blocks or window slots. */
export interface HeldRows {
  readonly scope: 'block' | 'windowSlot';
  readonly allocator: (v: EngineViews) => BlockPool;
  /** The pools' column of the row they hold + 1 (0: none). */
  readonly held: (v: EngineViews) => Int32Array;
  /** What a full allocator says it ran out of: [the pools, the rows]. */
  readonly what: readonly [string, string];
}

export const RING_BLOCKS: HeldRows = { scope: 'block', allocator: ringBlocks, held: (v) => v.poolBlock, what: ['pools with candle rings', 'ring blocks'] };
export const WINDOW_SLOTS: HeldRows = { scope: 'windowSlot', allocator: windowSlots, held: (v) => v.poolWindowSlot, what: ['pools with window figures', 'window slots'] };

/**
 * One block column's rows of a shard's pools, as 4-byte words: `mask` a bit per word (LSB first
 * within each u32), `words` the non-zero ones in order, `counts` the words kept of each row.
 */
export interface SparseRows {
  readonly mask: Uint8Array;
  readonly words: Uint8Array;
  readonly counts: Int32Array;
}

/**
 * What one shard hands over at a cut: the pools of its chains holding a block whose rows it copied
 * whole (`pools`), then, in a delta cut, those whose candles it has not written since its previous
 * cut (`kept`: at positions `at` of its list there, ascending), and each block column's rows (table
 * order): of `pools` in a candle column (ColumnSpec.candles: the kept pools' rows there are those
 * the snapshot of that cut holds), of `pools` then `kept.pools` in the others. The shard's list in
 * the file is `pools`, then `kept.pools`.
 */
export interface BlockCapture {
  readonly pools: Int32Array;
  readonly columns: readonly SparseRows[];
  readonly kept: KeptRows;
}

export interface KeptRows {
  readonly pools: Int32Array;
  readonly at: Int32Array;
}

const NONE_KEPT: KeptRows = { pools: new Int32Array(0), at: new Int32Array(0) };

/**
 * What a shard's next cut may take from the snapshot of its previous one: the pools it listed there
 * for a held kind, in their order in the file (copied whole, then kept), and the pools whose candles
 * it wrote since (`changed`: DirtyRows.candles as of the cut).
 */
export interface PreviousHeld {
  readonly list: Int32Array;
  readonly changed: DirtyBits;
}

/** A block column as the file holds it: this build's column, or a per-field ring column of an older file (its element's bytes given). */
type FileColumn = Pick<ColumnSpec, 'stride' | 'array' | 'name'>;

/** 4-byte words per row of a block column (every block column's row is a whole number of them). */
function wordsPerRow(c: FileColumn): number {
  const bytes = rowBytes(c);
  if (bytes % 4 !== 0) throw new Error(`block column ${c.name}: a row of ${bytes} bytes is not a whole number of 4-byte words`);
  return bytes / 4;
}

/** Ors `n` bits of `src` from bit `srcBit` into `dst` from bit `dstBit` (least significant bit first in each word; dst's bits there zero). */
export function appendBits(dst: Uint32Array, dstBit: number, src: Uint32Array, srcBit: number, n: number): void {
  while (n > 0) {
    const s = srcBit & 31;
    const d = dstBit & 31;
    const k = Math.min(n, 32 - s, 32 - d);
    const bits = k === 32 ? src[srcBit >>> 5]! : (src[srcBit >>> 5]! >>> s) & ((1 << k) - 1);
    dst[dstBit >>> 5] = dst[dstBit >>> 5]! | (bits << d);
    srcBit += k;
    dstBit += k;
    n -= k;
  }
}

/** Bytes of the mask for `words` words (whole u32s). */
export function maskBytes(words: number): number {
  return Math.ceil(words / 32) * 4;
}

function wordsOf(array: ColumnSpec['array']): Uint32Array {
  return new Uint32Array(array.buffer, array.byteOffset, array.byteLength >>> 2);
}

/**
 * One block column's rows packed without their zero words, row after row, into `arena`'s buffers
 * (the mask's and the words'): what a shard hands over at a cut, built in one go (captureShardBlocks) or
 * a slice at a time (HeldRowsCopy).
 */
class SparseColumn {
  private readonly perRow: number;
  private readonly maskBuf: Uint8Array;
  private readonly wordBuf: Uint8Array;
  private readonly mask: Int32Array;
  private readonly out: Int32Array;
  /** Words kept of each row appended. */
  private readonly counts: Int32Array;
  /** Words kept, mask bits written, the mask word being filled, and rows appended. */
  private n = 0;
  private bit = 0;
  private acc = 0;
  private rows = 0;

  constructor(c: ColumnSpec, rows: number, arena: CaptureArena) {
    this.perRow = wordsPerRow(c);
    const total = rows * this.perRow;
    this.maskBuf = arena.bytes(`${c.name}#mask`, maskBytes(total));
    this.wordBuf = arena.bytes(c.name, total * 4);
    const counts = arena.bytes(`${c.name}#counts`, rows * 4);
    this.mask = new Int32Array(this.maskBuf.buffer, this.maskBuf.byteOffset, this.maskBuf.byteLength >>> 2);
    this.out = new Int32Array(this.wordBuf.buffer, this.wordBuf.byteOffset, total);
    this.counts = new Int32Array(counts.buffer, counts.byteOffset, rows);
  }

  /** Appends the row starting at word `from` of `src`. */
  row(src: Int32Array, from: number): void {
    const { perRow, mask, out } = this;
    let { n, bit, acc } = this;
    const before = n;
    // Without branches on the data (three words in four are not zero: a branch would mispredict):
    // every word is stored at the next place and the place moves on only when it was not zero.
    for (let k = 0; k < perRow; k++, bit++) {
      const w = src[from + k]!;
      const kept = (w | -w) >>> 31;
      out[n] = w;
      n += kept;
      acc |= kept << (bit & 31);
      if ((bit & 31) === 31) {
        mask[bit >>> 5] = acc;
        acc = 0;
      }
    }
    this.counts[this.rows++] = n - before;
    this.n = n;
    this.bit = bit;
    this.acc = acc;
  }

  /** Writes the last mask word, once every row is appended. */
  end(): void {
    if ((this.bit & 31) !== 0) this.mask[this.bit >>> 5] = this.acc;
  }

  /** Words kept so far. */
  get kept(): number {
    return this.n;
  }

  /** The buffers (the words' whole: the rows kept are its first `kept` words). */
  buffers(): SparseRows {
    return { mask: this.maskBuf, words: this.wordBuf, counts: this.counts };
  }
}

function liveWords(c: ColumnSpec): Int32Array {
  return new Int32Array(c.array.buffer, c.array.byteOffset, c.array.byteLength >>> 2);
}

/**
 * Writes the words `mask` marks into the rows of a block column starting at block `first` (the rest
 * of those rows is left as it is: zero in fresh views). `words` holds the marked words in order.
 */
export function scatterRows(c: ColumnSpec, first: number, mask: Uint32Array, words: Uint32Array): void {
  const dst = wordsOf(c.array);
  const base = first * wordsPerRow(c);
  let n = 0;
  for (let m = 0; m < mask.length; m++) {
    let bits = mask[m]!;
    const at = base + m * 32;
    while (bits !== 0) {
      const low = bits & -bits;
      dst[at + 31 - Math.clz32(low)] = words[n++]!;
      bits ^= low;
    }
  }
  if (n !== words.length) throw new RangeError(`block column ${c.name}: the mask marks ${n} words, the section holds ${words.length}`);
}

/** On a shard at a cut: the blocks of the pools whose chain it owns, each block column without its zero words, copied now. */
export function captureShardBlocks(v: EngineViews, ownsChain: (chain: number) => boolean, arena = new CaptureArena(), kind: HeldRows = RING_BLOCKS): BlockCapture {
  const copy = new HeldRowsCopy(v, ownsChain, arena, kind, null, null);
  copy.step(Infinity);
  return copy.result();
}

/**
 * The pools of the shard's previous list whose candles it has not written since and that still hold
 * their row, at their positions there (ascending).
 */
function keptRows(previous: PreviousHeld, heldOf: Int32Array, owner: Int32Array): KeptRows {
  const { list, changed } = previous;
  const at = new Int32Array(list.length);
  let n = 0;
  for (let i = 0; i < list.length; i++) {
    const p = list[i]!;
    if (changed.has(p)) continue;
    const row = heldOf[p]! - 1;
    // Its candles unwritten, it holds its row (taking and moving one write them): the check only guards that.
    if (row < 0 || owner[row] !== p + 1) continue;
    at[n++] = i;
  }
  const kept = at.slice(0, n);
  return { pools: kept.map((i) => list[i]!), at: kept };
}

/**
 * A shard's copy, at a cut, of the rows its pools hold per pool (ring blocks or window slots), made
 * after the cut in slices (`step`) while the shard goes on applying. Its writer calls `before(p)`
 * ahead of any write to pool p (where p's seqlock word moves: shards/apply.ts seqPool).
 * Invariant: a pool marked in `pending` holds, in the live columns, the row it held at the cut, and
 * its copy is still to be made; the first `before(p)` unmarks it and saves its row, which the copy
 * takes when it reaches it. Writes that bypass the seqlock (a rollback's reset and restore) finish
 * the copy first.
 *
 * Given the shard's list of its previous cut (`previous`, when the snapshot of that cut is the one
 * this cut's file is written over), a pool of that list whose candles the shard has not written since
 * (DirtyRows.candles) is kept (BlockCapture.kept): its candle columns' rows (ColumnSpec.candles) are
 * not copied, the file takes them from the previous one (write.ts KeptColumn); its other columns
 * (window state the sweep moves) are copied as any pool's.
 */
export class HeldRowsCopy {
  /** The pools holding a row at the cut whose rows are copied whole, in row order. */
  readonly pools: Int32Array;
  /** The pools holding a row at the cut whose candle rows the previous snapshot holds. */
  readonly kept: KeptRows;
  /** `pools` then `kept.pools`, and the row each held at the cut: the order the copy goes in. */
  private readonly order: Int32Array;
  private readonly rows: Int32Array;
  private readonly specs: readonly ColumnSpec[];
  /** Per column: true when a kept pool's row in it is taken from the previous file. */
  private readonly fromPrevious: readonly boolean[];
  private readonly columns: readonly SparseColumn[];
  private readonly heldOf: Int32Array;
  /** 4-byte words of a pool's row over every column (a saved row's length). */
  private readonly rowWords: number;
  /** Rows of a pool written to before its turn, every column's row after the other. */
  private readonly saved = new Map<number, Int32Array>();
  /** Bytes in `saved` now. */
  savedBytes = 0;
  private next = 0;
  private ended = false;

  constructor(
    v: EngineViews,
    ownsChain: (chain: number) => boolean,
    arena: CaptureArena,
    kind: HeldRows,
    private readonly pending: DirtyBits | null,
    previous: PreviousHeld | null,
  ) {
    const allocator = kind.allocator(v);
    const high = blockHighWater(v, allocator);
    const owned = new Uint8Array(v.capacity.chains);
    for (let c = 0; c < owned.length; c++) owned[c] = ownsChain(c) ? 1 : 0;
    // Held here, the shard's thread scans every row handed out: typed arrays, no call per row.
    const owner = allocator.owner;
    const chainOf = v.poolChain;
    this.heldOf = kind.held(v);
    this.specs = blockColumns(v.columnTable, kind.scope);
    const anyFromPrevious = this.specs.some((c) => c.candles);
    this.kept = previous !== null && pending !== null && anyFromPrevious ? keptRows(previous, this.heldOf, owner) : NONE_KEPT;
    this.fromPrevious = this.specs.map((c) => c.candles && this.kept.pools.length > 0);
    // The kept pools marked first, so that the scan passes them over; then every pool of the copy is.
    for (const p of this.kept.pools) pending!.mark(p);
    const keptCount = this.kept.pools.length;
    const order = new Int32Array(high + keptCount);
    const rows = new Int32Array(high + keptCount);
    let n = 0;
    for (let b = 0; b < high; b++) {
      const p = owner[b]! - 1;
      if (p >= 0 && owned[chainOf[p]!] === 1 && (keptCount === 0 || !pending!.has(p))) {
        rows[n] = b;
        order[n++] = p;
      }
    }
    this.pools = order.slice(0, n);
    if (pending !== null) for (let i = 0; i < n; i++) pending.mark(order[i]!);
    for (let k = 0; k < keptCount; k++) {
      const p = this.kept.pools[k]!;
      rows[n + k] = this.heldOf[p]! - 1;
      order[n + k] = p;
    }
    this.order = order.subarray(0, n + keptCount);
    this.rows = rows.subarray(0, n + keptCount);
    this.rowWords = this.specs.reduce((w, c) => w + wordsPerRow(c), 0);
    this.columns = this.specs.map((c, i) => new SparseColumn(c, this.fromPrevious[i] ? n : n + keptCount, arena));
  }

  /** The shard's list in the file: the pools copied whole, then those kept (what its next cut's `previous` is). */
  list(): Int32Array {
    return this.order.slice();
  }

  get done(): boolean {
    return this.next === this.order.length;
  }

  /** Pool p is about to be written: its rows as of the cut are saved first when its copy is still to be made. */
  before(p: number): void {
    if (this.pending === null || this.ended || !this.pending.has(p)) return;
    this.pending.unmark(p);
    // Its row now is the one it held at the cut (it moves only under p's seqlock, which has not moved since).
    const row = this.heldOf[p]! - 1;
    const copy = new Int32Array(this.rowWords);
    let at = 0;
    for (const c of this.specs) {
      const per = wordsPerRow(c);
      copy.set(liveWords(c).subarray(row * per, (row + 1) * per), at);
      at += per;
    }
    this.saved.set(p, copy);
    this.savedBytes += copy.byteLength;
  }

  /** Encodes pools in order until all are or `deadline` (performance.now()) has passed; true once all are. */
  step(deadline: number): boolean {
    const live = this.specs.map(liveWords);
    const per = this.specs.map(wordsPerRow);
    const whole = this.pools.length;
    while (this.next < this.order.length) {
      // Sixteen pools between looks at the clock: at most a few hundred KiB of rows.
      for (const end = Math.min(this.order.length, this.next + 16); this.next < end; this.next++) {
        const p = this.order[this.next]!;
        const fromPrevious = this.next >= whole ? this.fromPrevious : null;
        const copy = this.saved.get(p);
        if (copy === undefined) {
          this.pending?.unmark(p);
          const row = this.rows[this.next]!;
          for (let i = 0; i < this.columns.length; i++) if (fromPrevious === null || !fromPrevious[i]) this.columns[i]!.row(live[i]!, row * per[i]!);
          continue;
        }
        this.saved.delete(p);
        this.savedBytes -= copy.byteLength;
        for (let i = 0, at = 0; i < this.columns.length; at += per[i]!, i++) if (fromPrevious === null || !fromPrevious[i]) this.columns[i]!.row(copy, at);
      }
      if (performance.now() >= deadline) break;
    }
    if (!this.done) return false;
    if (!this.ended) {
      for (const c of this.columns) c.end();
      this.pending?.clear();
    }
    this.ended = true;
    return true;
  }

  /** Block columns copied. */
  get columnCount(): number {
    return this.columns.length;
  }

  /** The pools and the columns' buffers, before the copy is done: their words are those kept once it is (`wordCounts`). */
  handOver(): BlockCapture {
    return { pools: this.pools, columns: this.columns.map((c) => c.buffers()), kept: this.kept };
  }

  /** Words kept per column, once done. */
  wordCounts(): number[] {
    return this.columns.map((c) => c.kept);
  }

  /** What the shard hands over, once done. */
  result(): BlockCapture {
    if (!this.done) throw new Error('the cut\'s rows are not all copied yet');
    return { pools: this.pools, columns: this.columns.map((c) => ({ ...c.buffers(), words: c.buffers().words.subarray(0, c.kept * 4) })), kept: this.kept };
  }
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

/** A growable scratch buffer of u32 words for reading sections (one per load). */
class Scratch {
  private buf = new Uint32Array(0);
  words(n: number): Uint32Array {
    if (this.buf.length < n) this.buf = new Uint32Array(Math.max(n, this.buf.length * 2));
    return this.buf.subarray(0, n);
  }
}

function readWords(fd: number, scratch: Scratch, offset: number, bytes: number): Uint32Array {
  const w = scratch.words(bytes >>> 2);
  readExactly(fd, new Uint8Array(w.buffer, w.byteOffset, bytes), offset);
  return w;
}

/** Reads one sparse segment (a shard's rows of one column) into rows `first`.. of the column. */
function loadSegment(fd: number, spec: ColumnSpec, seg: BlockSegment, first: number, masks: Scratch, words: Scratch): void {
  const mask = readWords(fd, masks, seg.maskOffset, maskBytes(seg.pools * wordsPerRow(spec)));
  scatterRows(spec, first, mask, readWords(fd, words, seg.offset, seg.bytes));
}

/** At a start (main thread, no shard running): hands the snapshot's pools blocks 0..n-1 (their rows are read by `loadBlockRows`). */
export function assignSnapshotBlocks(fd: number, section: BlocksSection, v: EngineViews, kind: HeldRows = RING_BLOCKS): void {
  assignBlocks(v, poolsOf(fd, section), kind.allocator(v), kind.held(v), kind.what);
}

/**
 * At a start, after `assignSnapshotBlocks` and before any shard applies a batch or any reader reads
 * a ring: reads the block columns' rows into blocks 0..n-1 (any thread attached to the views: the
 * start runs it on a thread of its own, block-loader.ts, while the main thread goes on).
 */
export function loadBlockRows(fd: number, section: BlocksSection, v: EngineViews): void {
  const byName = new Map(v.columnTable.map((c) => [c.name, c]));
  const legacy = legacyRingColumns(v);
  const masks = new Scratch();
  const words = new Scratch();
  for (const col of section.columns) {
    const old = legacy.get(col.name);
    if (old !== undefined) {
      loadRingField(fd, col, old, masks, words);
      continue;
    }
    const spec = byName.get(col.name)!;
    if (!('segments' in col)) {
      // Version 3: the rows whole, in block order.
      readExactly(fd, new Uint8Array(spec.array.buffer, spec.array.byteOffset, col.bytes), col.offset);
      continue;
    }
    let first = 0;
    for (const seg of col.segments) {
      loadSegment(fd, spec, seg, first, masks, words);
      first += seg.pools;
    }
  }
}

/**
 * Rows at file positions `at` (ascending) of one block column, each written whole (its zero words
 * too) into `dst` at word offset `to[k]`. A sparse segment is read once for all its wanted rows.
 */
function readRows(fd: number, col: BlockColumnSection, spec: FileColumn, at: readonly number[], dst: Uint32Array, to: readonly number[]): void {
  const perRow = wordsPerRow(spec);
  if (!('segments' in col)) {
    at.forEach((i, k) => readExactly(fd, new Uint8Array(dst.buffer, dst.byteOffset + to[k]! * 4, perRow * 4), col.offset + i * perRow * 4));
    return;
  }
  const masks = new Scratch();
  const packed = new Scratch();
  let k = 0;
  let first = 0;
  for (const seg of col.segments) {
    const end = first + seg.pools;
    if (k < at.length && at[k]! < end) {
      const mask = readWords(fd, masks, seg.maskOffset, maskBytes(seg.pools * perRow));
      const words = readWords(fd, packed, seg.offset, seg.bytes);
      let bit = 0;
      let n = 0;
      for (; k < at.length && at[k]! < end; k++) {
        const from = (at[k]! - first) * perRow;
        // Count the words kept before this row: whole mask words at once, then bit by bit.
        while (bit < from && (bit & 31) !== 0) n += (mask[bit >>> 5]! >>> (bit++ & 31)) & 1;
        while (bit + 32 <= from) {
          n += popcount(mask[bit >>> 5]!);
          bit += 32;
        }
        while (bit < from) n += (mask[bit >>> 5]! >>> (bit++ & 31)) & 1;
        const out = to[k]!;
        for (let j = 0; j < perRow; j++, bit++) dst[out + j] = (mask[bit >>> 5]! >>> (bit & 31)) & 1 ? words[n++]! : 0;
      }
    }
    first = end;
  }
  if (k < at.length) throw new RangeError(`block column ${col.name}: no row ${at[k]} in the snapshot`);
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** The rows pool `p` held at the cut in each block column (name → bytes), or null when it held no block (tests, tools). */
export function blockRowsOf(fd: number, section: BlocksSection, v: EngineViews, p: number): Map<string, Uint8Array> | null {
  const i = poolsOf(fd, section).indexOf(p);
  if (i < 0) return null;
  const byName = new Map<string, FileColumn>(v.columnTable.map((c) => [c.name, c]));
  for (const [name, old] of legacyRingColumns(v)) byName.set(name, old.shape);
  const out = new Map<string, Uint8Array>();
  for (const col of section.columns) {
    const spec = byName.get(col.name)!;
    const row = new Uint32Array(wordsPerRow(spec));
    readRows(fd, col, spec, [i], row, [0]);
    out.set(col.name, new Uint8Array(row.buffer));
  }
  return out;
}

/**
 * On the shard owning `pools` (a rollback, after it gave their blocks back): each of them that held a
 * block at the cut takes one and gets its rows back. Call inside the pools' seqlocks.
 */
export function restoreBlocks(fd: number, section: BlocksSection, v: EngineViews, pools: readonly number[], kind: HeldRows = RING_BLOCKS): void {
  if (section.pools === 0 || pools.length === 0) return;
  const wanted = new Set(pools);
  const inFile = poolsOf(fd, section);
  const allocator = kind.allocator(v);
  const held = kind.held(v);
  const at: number[] = [];
  const blocks: number[] = [];
  for (let i = 0; i < inFile.length; i++) {
    const p = inFile[i]!;
    if (!wanted.has(p)) continue;
    const b = take(allocator, p);
    if (b < 0) throw new RangeError(`no ${kind.what[1].slice(0, -1)} free to restore pool ${p}`);
    at.push(i);
    blocks.push(b);
  }
  if (at.length === 0) return;
  const byName = new Map(v.columnTable.map((c) => [c.name, c]));
  const legacy = legacyRingColumns(v);
  for (const col of section.columns) {
    const old = legacy.get(col.name);
    if (old !== undefined) {
      // A per-field ring column of an older file: its rows read whole, then each word put in its candle record.
      const perRow = wordsPerRow(old.shape);
      const rows = new Uint32Array(at.length * perRow);
      readRows(fd, col, old.shape, at, rows, at.map((_, k) => k * perRow));
      blocks.forEach((b, k) => scatterRingField(old, b, null, rows.subarray(k * perRow, (k + 1) * perRow)));
      continue;
    }
    const spec = byName.get(col.name)!;
    const perRow = wordsPerRow(spec);
    readRows(fd, col, spec, at, wordsOf(spec.array), blocks.map((b) => b * perRow));
  }
  at.forEach((i, k) => (held[inFile[i]!] = blocks[k]! + 1));
}

/**
 * A per-field ring column of a file written before the candle records (`ring.<iv>.<field>`, a slot
 * per candle): the record column of this build it goes to, and where the field sits in a record.
 */
interface LegacyRing {
  readonly shape: FileColumn;
  readonly records: ColumnSpec;
  readonly field: CandleField;
  readonly slots: number;
}

/** This build's record columns as an older file names their fields, by that name (derived from the column table and the candle record). */
function legacyRingColumns(v: EngineViews): Map<string, LegacyRing> {
  const byName = new Map(v.columnTable.map((c) => [c.name, c]));
  const out = new Map<string, LegacyRing>();
  for (const c of ringFieldColumns(v.columnTable)) {
    if (!('records' in c)) continue;
    const records = byName.get(c.records)!;
    const array = { BYTES_PER_ELEMENT: c.type === 'f64' ? 8 : 4 } as ColumnSpec['array'];
    out.set(c.name, { shape: { name: c.name, stride: c.slots, array }, records, field: c.field, slots: c.slots });
  }
  return out;
}

/**
 * Writes the words of per-field ring rows into the candle records of blocks `first`.. of the
 * record column: `mask` marks which of the rows' words `words` holds in order (null: every word,
 * zeros too). A field's slot s of block b is record b * slots + s; an f64 field's two words go to
 * its f64 word of the record, a u32 field's word to its u32 word.
 */
function scatterRingField(old: LegacyRing, first: number, mask: Uint32Array | null, words: Uint32Array): void {
  const dst = wordsOf(old.records.array);
  const f64 = old.field.type === 'f64';
  const perElement = f64 ? 2 : 1;
  const perRow = old.slots * perElement;
  const at = f64 ? old.field.word * 2 : old.field.word;
  const put = (i: number, word: number) => {
    const row = (i / perRow) | 0;
    const within = i - row * perRow;
    const slot = (within / perElement) | 0;
    dst[((first + row) * old.slots + slot) * CANDLE_U32_WORDS + at + (within - slot * perElement)] = word;
  };
  if (mask === null) {
    for (let i = 0; i < words.length; i++) put(i, words[i]!);
    return;
  }
  let n = 0;
  for (let m = 0; m < mask.length; m++) {
    let bits = mask[m]!;
    while (bits !== 0) {
      const low = bits & -bits;
      put(m * 32 + 31 - Math.clz32(low), words[n++]!);
      bits ^= low;
    }
  }
  if (n !== words.length) throw new RangeError(`block column ${old.shape.name}: the mask marks ${n} words, the section holds ${words.length}`);
}

/** Reads one per-field ring column of an older file (either encoding) into this build's candle records of blocks 0..n-1. */
function loadRingField(fd: number, col: BlockColumnSection, old: LegacyRing, masks: Scratch, words: Scratch): void {
  const perRow = wordsPerRow(old.shape);
  if (!('segments' in col)) {
    // Version 3: the rows whole, in block order; read a bounded number of rows at a time.
    const rowsAtOnce = Math.max(1, Math.floor(65_536 / perRow));
    const pools = col.bytes / (perRow * 4);
    for (let first = 0; first < pools; first += rowsAtOnce) {
      const n = Math.min(rowsAtOnce, pools - first);
      scatterRingField(old, first, null, readWords(fd, words, col.offset + first * perRow * 4, n * perRow * 4));
    }
    return;
  }
  let first = 0;
  for (const seg of col.segments) {
    const mask = readWords(fd, masks, seg.maskOffset, maskBytes(seg.pools * perRow));
    scatterRingField(old, first, mask, readWords(fd, words, seg.offset, seg.bytes));
    first += seg.pools;
  }
}
