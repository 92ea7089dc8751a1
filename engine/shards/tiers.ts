/**
 * Hot and quiet pools on one shard. A pool holds a ring block (state/ring-blocks.ts) while it trades;
 * once its last swap is `quietAfterSeconds` older than the newest event applied on its chain, its
 * windows are brought up to its chain's clock (as the next window sweep would) and it gives the
 * block back, in two sweeps so that no reader ever misses a candle:
 *   1. its ring candles are handed to the store (as evictions are) and written at once; what it
 *      still has open (its 6 h, 12 h and day candles while the day is not over, and the figures of
 *      the windows on bases not re-summed since its last swap, its 7 and 30 day ones) is also kept
 *      as a version for its swap count (store/parked.ts);
 *   2. at a later sweep, once that write is on disk, the block is freed if the pool is still quiet
 *      (a swap meanwhile keeps it hot). From then on its candles are read from LMDB; its row keeps the
 *      window figures search ranks by, re-summed from LMDB (apply.ts) when a candle leaves a window,
 *      and its other window figures are summed from LMDB when read (state/read.ts); windows it went
 *      quiet with before their re-sum go on from the kept figures (state/windows.ts parkedWindows).
 * A pool that trades again takes a block back with its candles reloaded, its open ones and window
 * figures as the version for its swap count gives them: so it reads as if it had never let go, and a
 * start that replays the log behind a run that went further (which stored the same open candles with
 * more swaps in) rebuilds the very candles that run had.
 * When blocks run short (fewer than an eighth free) the oldest hot pools go quiet the same way,
 * however recent (an hour at least: MIN_QUIET_AFTER_SECONDS, so none has a candle in its chain's
 * current minute or hour); when none is left at all, the oldest of those are written synchronously
 * and freed at once.
 */
import { INTERVALS, INTERVAL_SECONDS, TOKEN_SECOND_SLOTS, WINDOW_BASES, WINDOW_COUNT } from '../state/layout.js';
import { resummedSinceSwap, windowAnchor } from '../state/windows.js';
import { blockHighWater, blockStats, give, giveBlock, releaseFreeTail, releaseMinBlocks, ringBlocks, scopeColumns, secondBlocks, take, type BlockPool } from '../state/ring-blocks.js';
import { windowSlots } from '../state/window-slots.js';
import { ringOpenedAt, type CandleRing, type ColumnSpec, type EngineViews } from '../state/views.js';
import { CANDLE_U32_WORDS, CandleU32, SECOND_U32_WORDS, SecondU32 } from '../state/candle-record.js';
import { chunkStart, mergeChunk } from '../store/candles.js';
import { parkedValue } from '../store/parked.js';
import type { Store } from '../store/store.js';
import type { ShardWriter } from './apply.js';
import { appendCandle, type LmdbSink } from './lmdb-sink.js';
import { windowAsOf } from '../state/window-slots.js';

export interface TierPolicy {
  /** A pool whose last swap is this much older than its chain's clock gives its ring block back. */
  readonly quietAfterSeconds: number;
}

/**
 * A day: a pool that trades every few hours (most of a dense market) would otherwise hand its block
 * over and take it back, reloading its candles from the store, at nearly every swap; that halves a
 * backfill of the default dataset. At millions of mostly quiet pools an hour keeps far fewer blocks.
 */
export const DEFAULT_TIER_POLICY: TierPolicy = { quietAfterSeconds: 86_400 };
/** Shortest quiet time allowed: a quiet pool has no candle in the current minute or hour (tokens.ts reads them from rings). */
export const MIN_QUIET_AFTER_SECONDS = 3_600;
/** A token whose newest 1 s candle is this much older than its chain's clock gives its second block back (streams have sealed and sent it). */
export const SECONDS_KEPT_AFTER_S = 60;
/** Hot pools moved down to lower ring blocks per sweep at most (compactBlocks): 4,096 blocks are about 70 MiB copied. */
const MAX_MOVES_PER_SWEEP = 4096;
/** Below this share of free blocks, the oldest hot pools go quiet whatever their age. */
const LOW_FREE_SHARE = 1 / 8;

export interface TierStats {
  /** Pools that gave their block back / took one back from LMDB, since the thread started. */
  released: number;
  reloaded: number;
  /** Pools freed synchronously because no block was left. */
  forced: number;
  /** Candles a reload or a quiet pool's windows expected in LMDB and did not find (0 unless the store lost some). */
  missing: number;
}

export class ShardTiers {
  /**
   * Pools handing their candles over: their swap count then (a swap since, even in the same second,
   * keeps them hot), and the write generation that stores them.
   */
  private readonly releasing = new Map<number, { readonly swaps: number; readonly generation: number }>();
  private generation = 0;
  private durableGeneration = 0;
  /** The newest chain clock of this shard's chains at the last sweep (Unix s). */
  private sweptAt = 0;
  private released = 0;
  private forced = 0;
  /** The pools of blocks whose free tails this shard gives back after its sweeps (releaseTails), with their columns and the least tail worth it; the ring blocks' first. */
  private readonly tails: readonly { readonly pool: BlockPool; readonly columns: readonly ColumnSpec['array'][]; readonly min: number }[];

  constructor(
    private readonly views: EngineViews,
    private readonly writer: ShardWriter,
    private readonly sink: LmdbSink | null,
    private readonly store: Store | null,
    private readonly ownsChain: (chain: number) => boolean,
    private readonly policy: TierPolicy | null,
  ) {
    if (store !== null) writer.onBlocksExhausted = () => this.freeNow();
    this.tails = (
      [
        [ringBlocks(views), 'block'],
        [secondBlocks(views), 'secondBlock'],
        [windowSlots(views), 'windowSlot'],
      ] as const
    ).map(([pool, scope]) => ({ pool, columns: scopeColumns(views, scope, pool), min: releaseMinBlocks(views, scope) }));
  }

  /** Whether the free ring blocks below the high-water mark are worth moving pools for (two releases' worth, and a sixteenth of the mark), with no cut being copied. */
  private compactionDue(): boolean {
    // While a cut is still being copied each move would save the pool's rows first: after it.
    if (this.writer.cut !== null) return false;
    const high = blockHighWater(this.views);
    return high - blockStats(this.views).used >= Math.max(2 * this.tails[0]!.min, high >>> 4);
  }

  /**
   * Moves this shard's hot pools from the top ring blocks into the lowest free ones (at most `max`),
   * when the blocks below the high-water mark are far from all in use: a pool that keeps trading holds
   * its block for good, and one taken high up while a backfill held many would keep the mark, and the
   * memory below it, up. Each move copies the block's rows and repoints the pool inside its seqlock, as
   * any write of the pool is made (a cut still being copied saves its rows first; readers retry).
   * Returns the pools moved.
   */
  compactBlocks(max: number): number {
    const v = this.views;
    const { pool, columns } = this.tails[0]!;
    const high = blockHighWater(v);
    const { used } = blockStats(v);
    let moved = 0;
    for (let b = high - 1; b >= used && moved < max; b--) {
      const p = v.blockPool[b]! - 1;
      if (p < 0 || this.releasing.has(p) || !this.ownsChain(v.poolChain[p]!)) continue;
      const to = take(pool, p);
      if (to < 0 || to > b) {
        if (to >= 0) give(pool, to);
        break;
      }
      this.writer.seqPool(p);
      this.writer.dirty.candles.mark(p);
      for (const c of columns) {
        const per = c.length / pool.count;
        c.copyWithin(to * per, b * per, (b + 1) * per);
      }
      v.poolBlock[p] = to + 1;
      this.writer.seqPool(p);
      give(pool, b);
      moved++;
    }
    return moved;
  }

  /**
   * Gives back the memory of the free blocks, second blocks and window slots above the highest in use
   * (ring-blocks.ts releaseFreeTail): after a backfill, whose pools held far more blocks at once
   * than a live service does, resident memory comes down to what is in use. Returns the blocks released.
   */
  releaseTails(): number {
    let n = 0;
    for (const t of this.tails) n += releaseFreeTail(t.pool, t.columns, t.min);
    return n;
  }

  /** Pools handing their candles over: they keep their blocks until the write is on disk (and are not moved meanwhile). */
  get handingOver(): number {
    return this.releasing.size;
  }

  stats(): TierStats {
    return { released: this.released, reloaded: this.writer.reloads, forced: this.forced, missing: this.writer.reloadMisses };
  }

  /** Frees the second blocks of this shard's tokens with no 1 s candle in the last SECONDS_KEPT_AFTER_S (any shard, store or not). */
  sweepSeconds(): number {
    const v = this.views;
    const pool = secondBlocks(v);
    const high = blockHighWater(v, pool);
    let freed = 0;
    for (let b = 0; b < high; b++) {
      const t = pool.owner[b]! - 1;
      if (t < 0) continue;
      const chain = v.tokenChain[t]!;
      if (!this.ownsChain(chain)) continue;
      const n = v.secOpened[t]!;
      const newest = n > v.secBase[b]! ? v.secWords[(b * TOKEN_SECOND_SLOTS + ((n - 1) % TOKEN_SECOND_SLOTS)) * SECOND_U32_WORDS + SecondU32.time]! : 0;
      if (newest + SECONDS_KEPT_AFTER_S > v.chainClock[chain]!) continue;
      this.writer.seqToken(t);
      v.tokenSecondBlock[t] = 0;
      this.writer.seqToken(t);
      give(pool, b);
      freed++;
    }
    if (freed > 0) this.releaseTails();
    return freed;
  }

  /** True when the events this shard applied moved a quarter of the quiet time since the last sweep. */
  due(): boolean {
    if (this.policy === null) return false;
    return this.newestClock() - this.sweptAt >= this.policy.quietAfterSeconds / 4;
  }

  private newestClock(): number {
    let newest = 0;
    const clocks = this.writer.chainTime;
    for (let c = 0; c < clocks.length; c++) if (clocks[c]! > newest) newest = clocks[c]!;
    return newest;
  }

  /**
   * One sweep: frees the blocks whose candles are on disk, and hands over the candles of pools that
   * went quiet (or are the oldest, when blocks run short). Returns how many pools began handing over:
   * the caller then commits the sink and passes its write to `written`.
   */
  sweep(): number {
    const { views: v, sink } = this;
    if (sink === null || this.policy === null) return 0;
    this.sweptAt = this.newestClock();
    for (const [p, r] of this.releasing) {
      if (r.generation > this.durableGeneration) continue;
      this.releasing.delete(p);
      if (v.poolBlock[p] !== 0 && v.txnsTotal[p] === r.swaps) {
        this.release(p);
        this.released++;
      }
    }
    if (this.compactionDue()) this.compactBlocks(MAX_MOVES_PER_SWEEP);
    this.releaseTails();
    const next = this.generation + 1;
    let begun = 0;
    const high = blockHighWater(v);
    for (let b = 0; b < high; b++) {
      const p = v.blockPool[b]! - 1;
      if (p < 0 || this.releasing.has(p)) continue;
      const chain = v.poolChain[p]!;
      if (!this.ownsChain(chain) || v.lastSwapTime[p]! > this.writer.chainTime[chain]! - this.policy.quietAfterSeconds) continue;
      this.refreshed(p);
      this.handOver(p, b, next);
      begun++;
    }
    const { free, total } = blockStats(v);
    const short = Math.ceil(total * LOW_FREE_SHARE) - free - this.releasing.size;
    if (short > 0) {
      for (const p of this.oldestHot(short)) {
        this.refreshed(p);
        this.handOver(p, v.poolBlock[p]! - 1, next);
        begun++;
      }
    }
    if (begun > 0) this.generation = next;
    return begun;
  }

  /** The sink write issued after a sweep that began handing over: once it is on disk, those pools may be freed. */
  written(write: Promise<unknown>): void {
    const generation = this.generation;
    write.then(
      () => {
        if (generation > this.durableGeneration) this.durableGeneration = generation;
      },
      () => undefined,
    );
  }

  /** Forgets pools being rolled back (their rings are rebuilt from the log or a snapshot). */
  forget(pools: readonly number[]): void {
    for (const p of pools) this.releasing.delete(p);
  }

  /** Calls `fn` with each candle pool p's ring block b holds: interval, ring and slot, oldest first per interval. */
  private eachHeld(p: number, b: number, fn: (interval: number, r: CandleRing, slot: number) => void): void {
    const v = this.views;
    for (let i = 0; i < INTERVALS.length; i++) {
      const r = v.rings[i]!;
      const n = v.ringOpened[ringOpenedAt(b, i)]!;
      const R = r.slots;
      for (let k = n > R ? n - R : 0; k < n; k++) fn(i, r, b * R + (k % R));
    }
  }

  private handOver(p: number, b: number, generation: number): void {
    const sink = this.sink!;
    const swaps = this.views.txnsTotal[p]!;
    this.eachHeld(p, b, (i, r, s) => sink.candleEvicted(p, i, r, s));
    const open = this.openState(p, b);
    if (open !== null) sink.park(p, swaps, open);
    this.releasing.set(p, { swaps, generation });
  }

  /**
   * What pool p (block b) still has open, as a version (store/parked.ts) for the current batch: the
   * newest candle of each interval that its chain's clock has not closed, and the figures of the
   * windows on each base not re-summed since its last swap; null when all are closed and re-summed
   * (its stored candles then give it all).
   */
  private openState(p: number, b: number): number[] | null {
    const v = this.views;
    const clock = this.writer.chainTime[v.poolChain[p]!]!;
    const candles: number[] = [];
    const windows: number[] = [];
    let closesAt = 0;
    for (let i = 0; i < INTERVALS.length; i++) {
      const n = v.ringOpened[ringOpenedAt(b, i)]!;
      if (n === 0) continue;
      const r = v.rings[i]!;
      const s = b * r.slots + ((n - 1) % r.slots);
      const ends = r.words[s * CANDLE_U32_WORDS + CandleU32.time]! + INTERVAL_SECONDS[i]!;
      if (ends <= clock) continue;
      candles.push(i);
      appendCandle(candles, r, s);
      if (ends > closesAt) closesAt = ends;
    }
    for (let base = 0; base < WINDOW_BASES.length; base++) {
      if (this.summed(p, base)) continue;
      const asOf = windowAsOf(v, base, p);
      windows.push(base, asOf);
      const o = b * WINDOW_COUNT;
      for (const w of WINDOW_BASES[base]!.windows) {
        windows.push(v.blockWinVolumeUsd[o + w]!, v.blockWinBuyVolumeUsd[o + w]!, v.blockWinTxns[o + w]!, v.blockWinBuys[o + w]!, v.blockWinRefPrice[o + w]!, v.blockWinRefPrice1[o + w]!);
      }
      const seconds = INTERVAL_SECONDS[WINDOW_BASES[base]!.base]!;
      const resummed = windowAnchor(asOf, seconds) + seconds;
      if (resummed > closesAt) closesAt = resummed;
    }
    if (candles.length === 0 && windows.length === 0) return null;
    return parkedValue(this.sink?.batch ?? 0, closesAt, candles, windows);
  }

  /**
   * True when pool p's window figures on base b were last re-summed, not added to: no swap since
   * (their anchor moved after its last swap; the one-minute candles that left them since are taken
   * out in the order a re-sum takes them out). Only then does re-summing its stored candles when it
   * is read give the figures it has, to the last digit; the figures of the other bases go with its
   * open candles (store/parked.ts).
   */
  private summed(p: number, b: number): boolean {
    const v = this.views;
    return resummedSinceSwap(windowAsOf(v, b, p), v.lastSwapTime[p]!, INTERVAL_SECONDS[WINDOW_BASES[b]!.base]!);
  }

  /**
   * Brings pool p's windows up to the newest event this shard applied on its chain before it goes
   * quiet: never past a swap still to come, so the one-minute candles that leave its windows are taken
   * out before and after that swap as in a run that let it go at another moment.
   */
  private refreshed(p: number): void {
    this.writer.refreshWindows(p, this.writer.chainTime[this.views.poolChain[p]!]!);
  }

  /** Frees pool p's block (its candles are on disk); when its windows next change is kept, as its rings give it. */
  private release(p: number): void {
    const v = this.views;
    const b = v.poolBlock[p]! - 1;
    this.writer.seqPool(p);
    // A pool holding a ring block holds a window slot (views.ts poolWindowSlot).
    const slot = v.poolWindowSlot[p]! - 1;
    for (let w = 0; w < WINDOW_BASES.length; w++) v.winNextChange[w]![slot] = this.writer.nextWindowChange(p, w);
    v.poolBlock[p] = 0;
    this.writer.seqPool(p);
    giveBlock(v, b);
    // Its windows may have emptied while it held the block (the window sweep let it go then).
    this.writer.releaseWindowSlot(p);
  }

  /**
   * Up to `count` hot pools of this shard with no candle in their chain's current hour, not already handing over, oldest last
   * swap first.
   */
  private oldestHot(count: number): number[] {
    const v = this.views;
    const hot: number[] = [];
    const high = blockHighWater(v);
    for (let b = 0; b < high; b++) {
      const p = v.blockPool[b]! - 1;
      if (p < 0 || this.releasing.has(p)) continue;
      const chain = v.poolChain[p]!;
      if (this.ownsChain(chain) && v.lastSwapTime[p]! <= this.writer.chainTime[chain]! - MIN_QUIET_AFTER_SECONDS) hot.push(p);
    }
    hot.sort((a, b) => v.lastSwapTime[a]! - v.lastSwapTime[b]!);
    return hot.slice(0, count);
  }

  /**
   * No block left while applying: the oldest 1/32 of this shard's hot pools (at least 8) have their
   * ring candles (and the versions of their open ones) written synchronously and their blocks freed at once.
   */
  private freeNow(): void {
    const v = this.views;
    const store = this.store!;
    const owned = this.oldestHot(Number.MAX_SAFE_INTEGER);
    const victims = owned.slice(0, Math.max(8, Math.floor(owned.length / 32)));
    if (victims.length === 0) return;
    const chunks = new Map<string, { key: [number, number, number]; data: number[] }>();
    const parked: { key: [number, number]; value: number[] }[] = [];
    for (const p of victims) {
      this.refreshed(p);
      const open = this.openState(p, v.poolBlock[p]! - 1);
      if (open !== null) parked.push({ key: [p, v.txnsTotal[p]!], value: open });
      this.eachHeld(p, v.poolBlock[p]! - 1, (i, r, s) => {
        const key: [number, number, number] = [p, i, chunkStart(i, r.words[s * CANDLE_U32_WORDS + CandleU32.time]!)];
        const id = key.join(':');
        let chunk = chunks.get(id);
        if (chunk === undefined) chunks.set(id, (chunk = { key, data: [] }));
        appendCandle(chunk.data, r, s);
      });
    }
    store.root.transactionSync(() => {
      for (const { key, data } of chunks.values()) store.candles.put(key, mergeChunk(store.candles.get(key), data));
      for (const { key, value } of parked) store.parked.put(key, value);
    });
    for (const { key } of chunks.values()) this.sink?.writtenNow(key[0], key[1], key[2]);
    for (const p of victims) {
      this.releasing.delete(p);
      this.release(p);
      this.forced++;
    }
  }
}
