import type { ApplyOptions, CommittedBatch, ShardDispatcher } from '../pipeline.js';
import type { EngineViews } from '../state/views.js';
import type { Store } from '../store/store.js';
import { PoolRankIndex, type RankQuery, type RankResult } from '../search/rank-index.js';
import type { PoolRanker } from '../search/ranker.js';
import { ShardWriter, type ApplyStats } from './apply.js';
import { LmdbSink } from './lmdb-sink.js';
import { resetState } from './reset.js';
import { restoreRows } from '../snapshot/load.js';
import { CaptureArena, type ShardCapture, type ShardRuns } from '../snapshot/capture.js';
import { copied, CutCopying, CutMarks, ShardCut } from '../snapshot/shard-cut.js';
import { sweepChains } from './sweep.js';
import { LmdbCandles } from './stored-candles.js';
import { ShardTiers, type TierPolicy } from './tiers.js';
import { SwapFeed } from '../feed/swaps.js';

/**
 * All chains applied on the calling thread, persisting like a shard thread does when given a
 * store: for tests and tools that need no worker threads.
 */
export class LocalShards implements ShardDispatcher, PoolRanker {
  readonly shards = 1;
  readonly writer: ShardWriter;
  /** Capture buffers and not-yet-copied marks reused from cut to cut (snapshot/capture.ts, shard-cut.ts). */
  private readonly arena = new CaptureArena();
  private readonly marks: CutMarks;
  /** A cut's rows, copied in slices on this thread after the cut. */
  private readonly copying: CutCopying;
  readonly index: PoolRankIndex;
  readonly sink: LmdbSink | null;
  /** Watched swaps, published after each apply. */
  readonly swapFeed = new SwapFeed();
  private readonly views: EngineViews;
  private lastSeq = 0;

  readonly tiers: ShardTiers;
  /** The stored candles the writer reads (its one-minute chunk cache is dropped on a rollback). */
  private readonly candles: LmdbCandles | null;

  constructor(views: EngineViews, store: Store | null = null, tiers: TierPolicy | null = null) {
    this.views = views;
    this.sink = store ? new LmdbSink(store) : null;
    this.candles = store && this.sink ? new LmdbCandles(store, this.sink) : null;
    this.writer = new ShardWriter(views, this.sink, this.candles);
    this.tiers = new ShardTiers(views, this.writer, this.sink, store, () => true, tiers);
    this.index = new PoolRankIndex(views, Array.from({ length: views.capacity.chains }, (_, c) => c));
    this.writer.index = this.index;
    this.marks = new CutMarks(views.capacity.pools, views.capacity.tokens);
    this.copying = new CutCopying(this.writer);
  }

  shardOf(): number {
    return 0;
  }

  rank(_shard: number, q: RankQuery): Promise<RankResult> {
    return Promise.resolve(this.index.query(q));
  }

  apply(batches: readonly CommittedBatch[], options?: ApplyOptions): Promise<ApplyStats> {
    const total: ApplyStats = { events: 0, swaps: 0, skipped: 0 };
    const persist = options?.persist !== false;
    this.index.beginTask();
    this.copying.slice();
    for (const { seq, bytes } of batches) {
      this.sink?.applying(seq);
      if (persist) {
        this.lastSeq = seq;
        this.sink?.beginBatch(seq);
      }
      const stats = this.writer.applyBatch(bytes, persist);
      if (persist) this.sink?.commit(0, seq);
      total.events += stats.events;
      total.swaps += stats.swaps;
      total.skipped += stats.skipped;
    }
    const feed = this.writer.takeFeed();
    if (feed !== null && persist) this.swapFeed.publish(feed);
    return Promise.resolve(total);
  }

  /** Zeroes pools and tokens of a chain being rolled back. */
  reset(_chain: number, pools: readonly number[], tokens: readonly number[]): Promise<void> {
    this.index.beginTask();
    this.copying.finish();
    this.tiers.forget(pools);
    this.candles?.forgetAll();
    resetState(this.views, pools, tokens);
    this.markChanged(pools, tokens);
    return Promise.resolve();
  }

  /** Copies snapshot rows of pools and tokens of a chain being rolled back. */
  restore(_chain: number, path: string, pools: readonly number[], tokens: readonly number[]): Promise<void> {
    this.index.beginTask();
    this.copying.finish();
    this.candles?.forgetAll();
    restoreRows(path, this.views, pools, tokens);
    this.markChanged(pools, tokens);
    return Promise.resolve();
  }

  /** Rows a rollback rewrote: changed for search, for the window sweep and for the next snapshot cut. */
  private markChanged(pools: readonly number[], tokens: readonly number[]): void {
    for (const p of pools) {
      this.index.markDirty(p);
      this.writer.sweepSet.add(p);
    }
    this.writer.dirty.pools.markAll(pools);
    this.writer.dirty.candles.markAll(pools);
    this.writer.dirty.tokens.markAll(tokens);
  }

  sweep(chainCount: number): number {
    this.index.beginTask();
    const changed = sweepChains(this.writer, this.views, Array.from({ length: chainCount }, (_, c) => c));
    this.tiers.sweepSeconds();
    if (this.sink !== null && this.lastSeq > 0 && this.tiers.sweep() > 0) {
      this.sink.commit(0, this.lastSeq, true);
      this.tiers.written(this.sink.flushed());
    }
    return changed;
  }

  /** A snapshot cut: this thread's rows (all of them: one shard) and pending candles, copied in slices after it. */
  async capture(runs: readonly ShardRuns[], delta: boolean, held: boolean): Promise<ShardCapture[]> {
    const handed = this.copying.begin(() => new ShardCut(this.views, runs[0]!, this.writer.dirty, delta, this.arena, () => true, this.marks, this.sink?.pendingChunks() ?? [], held));
    return [await copied(handed)];
  }

  async durable(): Promise<void> {
    await this.sink?.flushed();
  }

  /** Writes every pending candle (the store holds all evicted candles afterwards). */
  async flush(): Promise<void> {
    if (this.sink !== null) {
      this.sink.commit(0, this.lastSeq, true);
      await this.sink.flushed();
    }
  }
}
