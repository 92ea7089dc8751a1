import type { CommittedBatch, ShardDispatcher } from '../ingest/ingest.js';
import type { EngineViews } from '../state/views.js';
import type { Store } from '../store/store.js';
import { ShardWriter, type ApplyStats } from './apply.js';
import { LmdbSink } from './lmdb-sink.js';
import { sweepChains } from './sweep.js';

/**
 * All chains applied on the calling thread, persisting like a shard thread does when given a
 * store: for tests and tools that need no worker threads.
 */
export class LocalShards implements ShardDispatcher {
  readonly writer: ShardWriter;
  readonly sink: LmdbSink | null;
  private readonly views: EngineViews;
  private lastSeq = 0;

  constructor(views: EngineViews, store: Store | null = null) {
    this.views = views;
    this.sink = store ? new LmdbSink(store) : null;
    this.writer = new ShardWriter(views, this.sink);
  }

  apply(batches: readonly CommittedBatch[]): Promise<ApplyStats> {
    const total: ApplyStats = { events: 0, swaps: 0, skipped: 0 };
    for (const { seq, bytes } of batches) {
      this.lastSeq = seq;
      this.sink?.beginBatch(seq);
      const stats = this.writer.applyBatch(bytes);
      this.sink?.commit(0, seq);
      total.events += stats.events;
      total.swaps += stats.swaps;
      total.skipped += stats.skipped;
    }
    return Promise.resolve(total);
  }

  sweep(chainCount: number): number {
    return sweepChains(this.writer, this.views, Array.from({ length: chainCount }, (_, c) => c));
  }

  /** Writes every pending candle (the store holds all evicted candles afterwards). */
  async flush(): Promise<void> {
    if (this.sink !== null) {
      this.sink.commit(0, this.lastSeq, true);
      await this.sink.flushed();
    }
  }
}
