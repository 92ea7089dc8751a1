/**
 * A snapshot cut on a shard, held for as little as the shard can: when the cut reaches it, the shard
 * notes what the cut copies (the rows it changed since the previous cut, the pools holding ring
 * blocks and window slots) and takes its pending candles; the copies are made afterwards, a slice
 * at a time between its tasks, a row copied or saved first when the shard is about to write it
 * (capture.ts ChangedRowsCopy, blocks.ts HeldRowsCopy). The first cut of a run copies every row at
 * once. The main thread waits on the progress words for the copy to end.
 */
import { HeldRowsCopy, RING_BLOCKS, WINDOW_SLOTS, type BlockCapture } from './blocks.js';
import { captureBuffers, captureShardRows, ChangedRowsCopy, type CaptureArena, type RowMarks, type PendingChunkData, type ShardCapture, type ShardRuns } from './capture.js';
import { DirtyBits, type DirtyRows } from './dirty.js';
import type { EngineViews } from '../state/views.js';

/**
 * Progress of a shard's copy, shared with the main thread: written by the shard only, read by the
 * main thread once STATE is no longer COPYING (the shard's stores before it are then visible).
 */
const STATE = 0;
/** Longest slice (or synchronous finish) in microseconds, and all the slices' time. */
const LONGEST_US = 1;
const TOTAL_US = 2;
/** Then the words kept per block column: the ring blocks' columns, then the window slots'. */
const WORDS = 3;
const COPYING = 0;
const COPIED = 1;
const FAILED = 2;

/** Bytes of rows saved ahead of their turn past which the copy is finished at once (it then holds the shard, as a cut did before). */
const SAVED_LIMIT = 64 * 2 ** 20;

/**
 * A shard's marks for the cut it is copying, reused from cut to cut (cleared as a copy ends): the
 * changed rows not copied yet (capture.ts ChangedRowsCopy), and per held kind the pools whose rows
 * are still to be copied (blocks.ts HeldRowsCopy); the pools whose candles it wrote before the cut
 * (cleared once the copies know them).
 */
export class CutMarks {
  readonly rows: RowMarks;
  readonly blocks: DirtyBits;
  readonly windowSlots: DirtyBits;
  readonly candles: DirtyBits;
  /** Per held kind (ring blocks, window slots), the shard's list in the file of its last cut (blocks.ts HeldRowsCopy.list), null before its first. */
  lists: [Int32Array | null, Int32Array | null] = [null, null];
  constructor(pools: number, tokens: number) {
    this.rows = { pools: new DirtyBits(pools), tokens: new DirtyBits(tokens) };
    this.blocks = new DirtyBits(pools);
    this.windowSlots = new DirtyBits(pools);
    this.candles = new DirtyBits(pools);
  }
}

/** What a shard hands over at once: its capture with the held rows still being copied (`copying` tells when they are). */
export type HandedOver = ShardCapture & { readonly copying: Int32Array };

export class ShardCut implements CutBarrier {
  /** A delta cut's changed rows (a full cut, the first of a run, copies every row at once). */
  private readonly rows: ChangedRowsCopy | null;
  private readonly copies: readonly HeldRowsCopy[];
  private readonly progress = new Int32Array(new SharedArrayBuffer(4 * WORDS + 4 * 64));
  private readonly handed: HandedOver;

  /**
   * Notes what the cut copies (a full cut's rows are copied now) and starts the copy; the shard is
   * held for that. `delta`: the file is written over the snapshot of the shard's previous cut, which
   * holds every row not changed since; `held`: its ring blocks too (the main thread knows where that
   * file keeps them), so the candle rows of pools whose candles it has not written since are not copied.
   */
  constructor(views: EngineViews, runs: ShardRuns, dirty: DirtyRows, delta: boolean, arena: CaptureArena, ownsChain: (chain: number) => boolean, marks: CutMarks, pending: readonly PendingChunkData[], held = false) {
    const t0 = performance.now();
    // The pools whose candles it wrote since the previous cut, kept before the marks are cleared for the next.
    const changed = delta && held ? marks.candles : null;
    changed?.copyFrom(dirty.candles);
    this.rows = delta ? new ChangedRowsCopy(views, runs, dirty, arena, marks.rows) : null;
    const rows = this.rows !== null ? { columns: this.rows.columns, rows: this.rows.rows } : captureShardRows(views, runs, dirty, false, arena);
    this.copies = ([RING_BLOCKS, WINDOW_SLOTS] as const).map((kind, k) => {
      const list = marks.lists[k] ?? null;
      return new HeldRowsCopy(views, ownsChain, arena, kind, k === 0 ? marks.blocks : marks.windowSlots, changed !== null && list !== null ? { list, changed } : null);
    });
    changed?.clear();
    marks.lists = [this.copies[0]!.list(), this.copies[1]!.list()];
    const columns = this.copies.reduce((n, c) => n + c.columnCount, 0);
    if (columns > this.progress.length - WORDS) throw new RangeError(`${columns} block columns: the progress words hold ${this.progress.length - WORDS}`);
    const [blocks, windowSlots] = this.copies.map((c) => c.handOver());
    const heldMs = performance.now() - t0;
    this.handed = { ...rows, pending, blocks: blocks!, windowSlots: windowSlots!, heldMs, sliceMs: 0, copyMs: heldMs, buffers: captureBuffers(views.columnTable, arena), copying: this.progress };
  }

  /** What the shard hands the main thread now (pass it to `copied` there). */
  handOver(): HandedOver {
    return this.handed;
  }

  get done(): boolean {
    return Atomics.load(this.progress, STATE) !== COPYING;
  }

  /** Pool p is about to be written: its row and held rows as of the cut are copied or saved first. */
  before(p: number): void {
    this.rows?.beforePool(p);
    let saved = 0;
    for (const c of this.copies) {
      c.before(p);
      saved += c.savedBytes;
    }
    if (saved > SAVED_LIMIT) this.step(Infinity);
  }

  /** Token t is about to be written: its row as of the cut is copied first. */
  beforeToken(t: number): void {
    this.rows?.beforeToken(t);
  }

  /** Copies for about `ms` milliseconds (Infinity: to the end); true once the copy is done. */
  step(ms: number): boolean {
    if (this.done) return true;
    const t0 = performance.now();
    try {
      let all = this.rows === null || this.rows.step(t0 + ms);
      for (const c of this.copies) if (!c.step(t0 + ms)) all = false;
      const us = Math.round((performance.now() - t0) * 1000);
      this.progress[LONGEST_US] = Math.max(this.progress[LONGEST_US]!, us);
      this.progress[TOTAL_US] = this.progress[TOTAL_US]! + us;
      if (!all) return false;
      let w = WORDS;
      for (const c of this.copies) for (const n of c.wordCounts()) this.progress[w++] = n;
      this.settle(COPIED);
      return true;
    } catch (err) {
      this.settle(FAILED);
      throw err;
    }
  }

  private settle(state: number): void {
    Atomics.store(this.progress, STATE, state);
    Atomics.notify(this.progress, STATE);
  }
}

/** What a shard's writer tells a cut still copying before it writes a pool's or a token's row. */
export interface CutBarrier {
  before(p: number): void;
  beforeToken(t: number): void;
}

/** A slice of the copy holds the shard's thread at most about this long. */
const SLICE_MS = 2;

/**
 * The cut a shard is copying, if any: stepped a slice per turn of the shard's event loop (and per
 * task, `slice`) until done; its writer told before each pool write meanwhile.
 */
export class CutCopying {
  private cut: ShardCut | null = null;
  private queued = false;

  /** `report` hears why a slice failed (the main thread only learns that it did, and fails that snapshot). */
  constructor(
    private readonly writer: { cut: CutBarrier | null },
    private readonly report: (err: unknown) => void = () => undefined,
  ) {}

  /** Finishes any cut still copying, makes the next one (`make` copies the changed rows) and starts its copy. */
  begin(make: () => ShardCut): HandedOver {
    this.finish();
    const cut = make();
    this.cut = cut;
    this.writer.cut = cut;
    this.queue();
    return cut.handOver();
  }

  /** Copies a slice, when a cut is copying. */
  slice(): void {
    if (this.cut === null) return;
    let done: boolean;
    try {
      done = this.cut.step(SLICE_MS);
    } catch (err) {
      // The progress words say FAILED: the main thread fails that snapshot; the shard goes on.
      this.report(err);
      done = true;
    }
    if (done) this.end();
    else this.queue();
  }

  /** Copies what is left at once (before writes that bypass the pools' seqlocks, and at close). */
  finish(): void {
    if (this.cut === null) return;
    this.cut.step(Infinity);
    this.end();
  }

  private end(): void {
    this.cut = null;
    this.writer.cut = null;
  }

  private queue(): void {
    if (this.queued) return;
    this.queued = true;
    setImmediate(() => {
      this.queued = false;
      this.slice();
    });
  }
}

/** Atomics.waitAsync (Node 16+; not in the ES2022 library typings). */
const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, index: number, value: number, timeoutMs: number): { async: boolean; value: Promise<string> | string } }).waitAsync.bind(Atomics);

/**
 * On the main thread: the capture a shard handed over, once its held rows are copied (their words
 * cut to what was kept), with the longest the shard was held and its copy's whole time.
 */
export async function copied(handed: HandedOver): Promise<ShardCapture> {
  const p = handed.copying;
  while (Atomics.load(p, STATE) === COPYING) {
    const r = waitAsync(p, STATE, COPYING, 1000);
    if (!r.async) continue;
    // The wait alone does not keep the process alive (a stop's last cut has nothing else pending): a timer does.
    const alive = setTimeout(() => undefined, 1000);
    await r.value;
    clearTimeout(alive);
  }
  if (Atomics.load(p, STATE) === FAILED) throw new Error('a shard failed to copy its ring blocks and window slots for a snapshot');
  let w = WORDS;
  const cut = (b: BlockCapture): BlockCapture => ({ ...b, columns: b.columns.map((c) => ({ ...c, words: c.words.subarray(0, p[w++]! * 4) })) });
  const { copying: _, ...capture } = handed;
  const blocks = cut(capture.blocks);
  const windowSlots = cut(capture.windowSlots);
  return { ...capture, blocks, windowSlots, sliceMs: p[LONGEST_US]! / 1000, copyMs: capture.copyMs + p[TOTAL_US]! / 1000 };
}
